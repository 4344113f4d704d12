"""How often the sampler reads: the default interval, its bounds, and the slower beats of the
readers that need no 10 Hz (disk and network counters, the other processes' CPU).

    check_interval(0.1)    # -> 0.1
    check_interval(-1)     # ValueError: interval must be > 0 seconds (got -1)
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_INTERVAL_SECONDS",
    "CPU_EVERY_SECONDS",
    "HOST_MEMORY_EVERY_SECONDS",
    "IO_EVERY_SECONDS",
    "TF_MEMORY_EVERY_SECONDS",
    "MAX_INTERVAL_SECONDS",
    "OTHERS_EVERY_SECONDS",
    "check_interval",
]

#: 10 Hz: fine enough to see a step stall, cheap enough to leave on (see docs/benchmarks.md).
DEFAULT_INTERVAL_SECONDS = 0.1
#: disk and network counters are read at most this often: rates over 1 s are what a reader
#: of them needs, and at 10 Hz they would be half of each sample's file reads
IO_EVERY_SECONDS = 1.0
#: CPU percentages (the host's, per core and in total, and the tree's) are taken over spans
#: of at least this long: the kernel counts CPU time in 10 ms clock ticks (USER_HZ), so over
#: one 10 ms sample a core reads 0% or 100%. Samples in between carry the last figure, and
#: /proc/stat is read only when one is due (at 100 Hz, one sample in ten)
CPU_EVERY_SECONDS = 0.1
#: the host's memory and swap (/proc/meminfo) are read at most this often, carried in
#: between: above 10 Hz only the watched tree's memory (RSS, read every sample: budgets and
#: peaks need it) keeps the full rate; meminfo was a third of a 100 Hz sample's reads
HOST_MEMORY_EVERY_SECONDS = 0.1
#: TensorFlow's allocator is read at most this often (``tfres run``'s child writes it once a
#: second; the peak is kept by TensorFlow itself), and at the first and last sample
TF_MEMORY_EVERY_SECONDS = 0.5
#: the other processes' CPU is scanned this often (a scan reads every /proc/PID/stat)
OTHERS_EVERY_SECONDS = 10.0
#: Above an hour a "timeline" has too few points to be one; such a value is a typo.
MAX_INTERVAL_SECONDS = 3600.0


def check_interval(interval: float) -> float:
    """Return ``interval`` if it is a usable sampling interval, else raise ValueError."""
    if not isinstance(interval, (int, float)) or isinstance(interval, bool):
        raise ValueError(f"interval must be a number of seconds (got {interval!r})")
    if not interval > 0:
        raise ValueError(f"interval must be > 0 seconds (got {interval!r})")
    if interval > MAX_INTERVAL_SECONDS:
        raise ValueError(
            f"interval must be at most {MAX_INTERVAL_SECONDS:.0f} seconds (got {interval!r})"
        )
    return float(interval)
