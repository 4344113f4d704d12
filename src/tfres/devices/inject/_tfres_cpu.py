# ruff: noqa: UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The program's CPU time past the process's total: each thread's, read thread by thread
(which threads a plain call of the step alone runs on, :func:`call_threads`, and what the
program's other threads ran beside a train call, :func:`beside_seconds`), and its worker
processes' (:func:`workers_cpu_seconds`).

Linux gives every thread and every process a CPU clock in nanoseconds (``/proc``'s
``stat`` counts 10 ms ticks, coarser than a step); Python reads another one's clock from its
id. A read costs about 1 us a thread: 20 us for 15 threads, 210 us for 200.
"""

import os
import statistics
import sys
import time

#: a thread that ran this share of a plain call alone's CPU or more, in half of its calls or
#: more, is one of the step's own threads (:func:`call_threads`): the caller's, the
#: intra-op and inter-op pools' it used
CALL_THREAD_SHARE = 0.02


def cpu_seconds():
    """Each thread's CPU seconds so far, by thread id: the per-thread CPU clock of every task
    in ``/proc/self/task`` (nanoseconds; ``/proc``'s ``stat`` counts 10 ms ticks, coarser
    than a step). None where there is no such clock (not Linux)."""
    try:
        tids = [int(name) for name in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return None
    out = {}
    for tid in tids:
        try:
            out[tid] = time.clock_gettime(_thread_clock(tid))
        except OSError:  # it ended meanwhile
            continue
    return out or None


def _thread_clock(tid):
    # the kernel's clock of thread ``tid``'s CPU time (CPUCLOCK_SCHED of one thread), the id
    # pthread_getcpuclockid gives: Python has no call for another thread's clock
    return ((~tid) << 3) | 6


def since(before):
    """Each thread's CPU seconds since ``before`` (:func:`cpu_seconds`), a thread
    started meanwhile counting all of its own; None where either read is None."""
    now = cpu_seconds() if before is not None else None
    if now is None:
        return None
    return {tid: seconds - before.get(tid, 0.0) for tid, seconds in now.items()}


def call_threads(readings):
    """The threads a plain call ran on: each that ran :data:`CALL_THREAD_SHARE` or more of
    the calls' CPU, over ``readings`` (:func:`since`, one a call), and ran in half
    of the calls or more. A pipeline still filling its prefetch buffer during the first
    calls (``ResourceMonitor`` times the step alone inside ``fit``, its iterator open) runs
    in those only: its threads stay the pipeline's. None where no call was read."""
    readings = [r for r in readings if r]
    if not readings:
        return None
    total, calls = {}, {}
    for reading in readings:
        for tid, seconds in reading.items():
            total[tid] = total.get(tid, 0.0) + seconds
            calls[tid] = calls.get(tid, 0) + (seconds > 0)
    cpu = sum(total.values())
    return frozenset(
        tid
        for tid, s in total.items()
        if s > 0 and s >= CALL_THREAD_SHARE * cpu and 2 * calls[tid] >= len(readings)
    )


def beside_seconds(readings, plain_threads, least):
    """The CPU of the other threads than ``plain_threads`` (:func:`call_threads`) in each
    call, their median over ``readings`` (:func:`since`, one a call, None where not read):
    tf.data's, a generator's, a ``PyDataset``'s. The step's own threads running longer than
    alone is not the pipeline's work: a VM's vCPU running the same math at two speeds (0.24
    and 0.33 s of user CPU a step, ``unseen44/compute_fnet_fit_reviews``), a weights save
    after every batch leaving the caches cold
    (``unseen48/checkpoint_h5weights_batchcb_glacierflow``: 5.6-8 ms a step by process, read
    as 14-21% input against none; 0.5 ms by thread). None where fewer than ``least`` calls
    were read (not Linux), or ``plain_threads`` is not known."""
    if not plain_threads:
        return None
    beside = [
        sum(s for tid, s in reading.items() if tid not in plain_threads)
        for reading in readings
        if reading is not None
    ]
    return statistics.median(beside) if len(beside) >= least else None


def workers_cpu_seconds():
    """CPU seconds used so far by this process's ``multiprocessing`` children (the worker
    processes of a ``PyDataset(use_multiprocessing=True)``, a ``Pool`` of the program's
    own): 0.0 with none, None where neither their clocks nor ``/proc`` can tell (not Linux)."""
    mp = sys.modules.get("multiprocessing")
    children = mp.active_children() if mp is not None else []
    if not children:
        return 0.0
    total = 0.0
    for child in children:
        seconds = process_cpu_seconds(child.pid)
        if seconds is None:
            if not os.path.isdir("/proc/self"):
                return None
            continue  # it ended meanwhile
        total += seconds
    return total


def process_cpu_seconds(pid):
    """Process ``pid``'s CPU seconds, all its threads': its CPU clock, in nanoseconds (a
    window of 8 fast steps lasts about 25 ms, and ``/proc``'s ``stat`` counts 10 ms ticks:
    a ``PyDataset``'s worker processes read 0.0 or 0.30 of a core over it), else that
    ``stat``'s ticks; None where it ended or neither can be read."""
    try:
        return time.clock_gettime(_process_clock(pid))
    except (OSError, OverflowError, AttributeError):  # gone, or no such clock here
        pass
    try:
        with open("/proc/%d/stat" % pid) as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _process_clock(pid):
    # the kernel's clock of process ``pid``'s CPU time (CPUCLOCK_SCHED of the whole process),
    # the id clock_getcpuclockid gives: Linux reads it for any process, Python has no call
    return ((~pid) << 3) | 2


def workers_cpu_since(before):
    """The CPU seconds the program's worker processes (a ``multiprocessing.Pool``, a
    ``ProcessPoolExecutor``) ran since ``before``, read for a custom loop's calls after a
    timed gap only (:func:`process_cpu_seconds`). Their batches are made beside the call, on
    the cores it runs on: a k-mer counting pool of 2 on 2 cores slowed each 18 ms call to
    25-120 ms, and the process's own CPU saw none of it
    (``unseen32/input_processpool_kmers_genomics``). 0.0 where not read."""
    if before is None:
        return 0.0
    now = workers_cpu_seconds()
    return max(0.0, now - before) if now is not None else 0.0
