# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""What the default profiler window costs while it runs: the reads that end it early.

:class:`_tfres_window.ProfilerWindow` ends its default window at the first step past a few
traced ones once one of these says it has cost enough:

- **the profiler's buffer** (:func:`buffer_bytes`): the profiler keeps every event in memory
  until it stops, and collecting them then takes the step after the window;
- **its time in a ``fit`` of known length** (:func:`cost_seconds`): each traced step runs
  longer than an unprofiled one (12% of a CRNN step, up to half a step of many small ops),
  and stopping the profiler then costs about twice that again. Over 600 tiny TFRecord
  files with a serial string parse, 1,900 steps of 12-14 ms (set 100's animal-care fit,
  where the instrumentation cost +2.4%), the 20 traced steps ran 4 ms above an unprofiled
  one and the stop took 150 ms: 0.23 s, about 0.8% of the fit, for a reading 8 steps give
  as well. :data:`_tfres_fitplan.RUN_SHARE` bounds the steps traced, not their cost.

The unprofiled step the cost is read against is the quickest of the steps before the
window past the first: the steps that lend their batch to the step alone
(:func:`_tfres_window.lending_steps`, up to three just before the window) carry the capture's
own cost, 15-35 ms each in that fit, two to three of its steps. The quickest one may also
be quicker than most (a pipeline's buffer filled during the first step): the cost then reads
higher, and the window ends sooner, never before :data:`_tfres_window.MIN_TRACED` steps.
"""

import os
import statistics

if __package__:  # tfres's own import (the Keras callback, the tests)
    from . import _tfres_held
else:  # the child's: the inject folder is on its path
    import _tfres_held  # type: ignore[no-redef]

#: the default window's cost, its traced steps' time above the unprofiled step's and its
#: stop, is kept under this share of the ``fit``'s expected time (its train steps times the
#: unprofiled step before the window)
MAX_COST_SHARE = 0.005
#: stopping the profiler costs about this many times what its traced steps ran above the
#: unprofiled step: 2.3-2.6 over tiny TFRecord files, 1.4-1.7 for a small MLP, 0.3-0.8 for
#: a generator of 12 ms steps (``benchmarks/profiler_buffer.py``), 1.9 in the fit above
STOP_PER_TRACED = 2.0
#: the fewest steps before the window (past the first) that tell what a step takes
MIN_BEFORE = 3

_STATM = _tfres_held.ProcFile("/proc/self/statm")


def rss_bytes():
    """The process's resident memory in bytes (``/proc/self/statm``, read keeping the GIL:
    :mod:`_tfres_held`), or None (not Linux)."""
    text = _STATM.read()
    if text is None:
        return None
    try:
        return int(text.split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, IndexError):
        return None


def buffer_bytes(rss, first):
    """What the profiler holds so far, in bytes, from ``rss``, the (step, resident bytes) of
    each step's start up to now, in a window from step ``first``: the process's growth since
    the window's first step, less the program's own growth before the window (its median over
    a step, times the steps traced: a ``cache()`` filling, a list of losses) so that only the
    window's is counted. None where it cannot be read."""
    before = [(i, b) for i, b in rss if i < first]
    inside = [(i, b) for i, b in rss if i >= first]
    if len(inside) < 2 or inside[0][1] is None or inside[-1][1] is None:
        return None
    own = [
        later - earlier
        for (i, earlier), (j, later) in zip(before, before[1:], strict=False)
        if i and j == i + 1 and earlier is not None and later is not None
    ]  # past step 0 -> 1: the first step builds and traces the model
    rate = max(0.0, statistics.median(own)) if own else 0.0
    (first, start), (index, now) = inside[0], inside[-1]
    return max(0, int(now - start - rate * (index - first)))


def unprofiled_seconds(before_seconds):
    """An unprofiled step's seconds: the quickest of ``before_seconds`` (see above); None
    with fewer than :data:`MIN_BEFORE` of them."""
    return min(before_seconds) if len(before_seconds) >= MIN_BEFORE else None


def cost_seconds(window_seconds, before_seconds):
    """What the window has cost so far, its stop included: its traced steps'
    ``window_seconds`` above an unprofiled step's (:func:`unprofiled_seconds` of the steps
    ``before_seconds`` it), times ``1 + STOP_PER_TRACED``; None where that is not known."""
    unprofiled = unprofiled_seconds(before_seconds)
    if unprofiled is None:
        return None
    above = sum(seconds - unprofiled for seconds in window_seconds)
    return max(0.0, above) * (1.0 + STOP_PER_TRACED)


def over_budget(window_seconds, before_seconds, fit_calls, share):
    """Whether the window's cost (:func:`cost_seconds`) has reached ``share`` of the time the
    fit's ``fit_calls`` train steps take unprofiled. False where either is not known."""
    cost = cost_seconds(window_seconds, before_seconds)
    if cost is None or not fit_calls or share is None:
        return False
    return cost >= share * fit_calls * unprofiled_seconds(before_seconds)
