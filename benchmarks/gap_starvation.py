"""Which Python starves the gap sampler: gaps in which it got no sample, out of 20.

The custom loops' gap sampler (``_tfres_pyinput.GapSampler``) is a daemon thread that needs
the GIL for each sample. A loader on the twelfth accuracy set kept it out for whole gaps.
Each case below makes 18 ms "batches" by repeating one small piece of work, in gaps timed
as the child times them, and counts the gaps with no sample (``GapReading.starved``).

The finding (session 29, on the 2-vCPU Zen 4 VM, nothing else running), with the switch
interval the sampler set then (0.5 ms): ``np.zeros`` every ~0.24 ms amid plain Python
starved it in 19-20 of 20 gaps, ``np.empty`` or the Python alone in none. NumPy releases
the GIL around ``calloc`` for zeroed arrays of 1 KiB or more (``default_calloc`` in its
``alloc.c``; these are 3.75 KiB); each release wakes the sampler, the loop's thread takes
the GIL back first, and because the GIL changed hands within the sampler's timed wait, the
wait never asks for a forced switch. A wait shorter than the time between two releases
does: the sampler's thread sets 0.1 ms, and each case runs at 5 ms, 0.5 ms and 0.1 ms. With
other programs busy on both cores the starvation mostly goes away, so run this on a quiet
machine. Since session 41 the sampler takes its samples by SIGALRM on the loop's own thread
where the program leaves SIGALRM free (no GIL changes hands, so nothing here applies); this
script measures the thread, which samples elsewhere (``benchmarks/gap_timer.py`` has both).

    .venv/bin/python benchmarks/gap_starvation.py [--gaps 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/tfres/devices/inject"))
from _tfres_pyinput import SWITCH_SECONDS, GapSampler  # noqa: E402

BATCH_SECONDS = 0.018
#: switch intervals tried in the gaps, seconds: the default, the sampler's until the convoy
#: was found, and its own since
SWITCHES = (0.005, 0.0005, SWITCH_SECONDS)


def _python() -> float:
    """About 0.2-0.3 ms of plain Python."""
    total = 0.0
    for i in range(4000):
        total += math.sin(i)
    return total


def zeros_then_python() -> None:
    np.zeros((32, 30), dtype=np.float32)
    _python()


def empty_then_python() -> None:
    np.empty((32, 30), dtype=np.float32)
    _python()


def python_only() -> None:
    _python()


CASES: dict[str, Callable[[], None]] = {
    "np.zeros + Python": zeros_then_python,
    "np.empty + Python": empty_then_python,
    "Python alone": python_only,
}


def starved_gaps(work: Callable[[], None], gaps: int, switch: float) -> int:
    def batches() -> Iterator[int]:
        while True:
            end = time.perf_counter() + BATCH_SECONDS
            while time.perf_counter() < end:
                work()
            yield 0

    # the thread's starvation (by SIGALRM, no GIL changes hands: none to see)
    gen, timer, starved = batches(), GapSampler(switch=switch, alarm=False), 0
    for _ in range(gaps):
        timer.start(loop_frame=sys._getframe())
        next(gen)
        reading = timer.stop()
        starved += bool(reading is not None and reading.starved)
        time.sleep(0.01)  # the hot function's call: the GIL released
    return starved


def _gaps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of gaps, 1 or more")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", type=_gaps, default=20, help="gaps per case and round (20)")
    parser.add_argument("--rounds", type=_gaps, default=2, help="rounds over the cases (2)")
    args = parser.parse_args()
    print(f"{'case':<20} {'switch':>7} {'round':>5} {'starved gaps':>13}")
    for round_ in range(1, args.rounds + 1):
        for name, work in CASES.items():
            for switch in SWITCHES:
                starved = starved_gaps(work, args.gaps, switch)
                print(f"{name:<20} {switch * 1e3:>4.1f} ms {round_:>5} {starved:>6} of {args.gaps}")


if __name__ == "__main__":
    main()
