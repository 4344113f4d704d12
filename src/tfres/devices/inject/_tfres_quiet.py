# ruff: noqa: UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Wait for the program's other threads to go idle before tfres times something alone.

The step alone (:mod:`_tfres_alone`) is the user's step with no pipeline running beside it.
After ``fit`` or a custom loop, a pipeline may still be filling its buffer, or a
``PyDataset`` worker finishing its batches: their CPU, read per thread from
``/proc/self/task/*/schedstat``, says when they are done.
"""

import os
import threading
import time

_clock = time.perf_counter
#: the step alone is timed with nothing else of the program running: first the process's
#: other threads (a pipeline still filling its buffer, a PyDataset worker finishing its
#: batches) must use under QUIET_SHARE of a core over QUIET_SECONDS; they are waited for up
#: to the caller's budget for the calls
QUIET_SECONDS = 0.05
QUIET_SHARE = 0.1
#: ...and the calls just after that wait still run slow: in 27 step-alone timings of
#: session 63's rounds (sets 91 and 92), the plain calls of the first 100 ms ran a median
#: 11% (up to 23%) above the later ones, and put 2-4% on their mean. The truths skip a
#: fit's first 5 steps; the timed calls begin after WARM_SECONDS of calls (:func:`settle`)
WARM_SECONDS = 0.1


def _others_cpu_seconds():
    """CPU seconds used so far by this process's threads other than the caller's (from
    ``/proc/self/task/*/schedstat``, in nanoseconds), or None where it cannot tell."""
    me = threading.get_native_id()
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    total = 0
    for tid in tids:
        if int(tid) == me:
            continue
        try:
            with open("/proc/self/task/%s/schedstat" % tid) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile (or no schedstat: then none is counted)
    return total / 1e9


def wait_for_quiet(max_seconds, cpu_seconds=_others_cpu_seconds, sleep=time.sleep):
    """Wait until the process's other threads are idle: under :data:`QUIET_SHARE` of a core
    over :data:`QUIET_SECONDS`, for at most ``max_seconds``. Returns ``(seconds waited,
    quiet)``: quiet is False when they were still busy at the bound, None where ``/proc``
    cannot tell (not Linux)."""
    start = _clock()
    before = cpu_seconds()
    if before is None:
        return 0.0, None
    while True:
        sleep(QUIET_SECONDS)
        now = cpu_seconds()
        if now is None:
            return _clock() - start, None
        if now - before < QUIET_SHARE * QUIET_SECONDS:
            return _clock() - start, True
        if _clock() - start >= max_seconds:
            return _clock() - start, False
        before = now


def settle(call, max_seconds, wait=wait_for_quiet):
    """Make ``call`` ready to be timed alone: call it once (the first call on a new iterator
    runs cold), wait for the process's other threads (``wait(max_seconds)``,
    :func:`wait_for_quiet`, whose answer is returned), then call it again while the calls
    fit in :data:`WARM_SECONDS`, each taken to last as long as the one before it (after a
    cold call longer than that, none)."""
    start = _clock()
    call()
    last = _clock() - start
    quiet = wait(max_seconds)
    start = _clock()
    while _clock() - start + last <= WARM_SECONDS:
        begin = _clock()
        call()
        last = _clock() - begin
    return quiet


def quiet_fields(quiet, note):
    """The step_alone event's ``quiet_wait_seconds`` and ``quiet`` from
    :func:`wait_for_quiet`'s answer; a note where the other threads never went idle."""
    if quiet is None:
        return {}
    waited, idle = quiet
    if idle is False:
        note(
            "the program's other threads were still busy %.1f s after training, while the "
            "step alone was timed: it may read slow, and the input wait low" % waited
        )
    return {"quiet_wait_seconds": round(waited, 6), "quiet": idle}
