# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The default profiler window fitted to a Keras ``fit`` whose length Keras knows.

The default window traces train steps 5-24 (:data:`_tfres_instrument.DEFAULT_WINDOW`). Two
kinds of ``fit`` are short for it:

- **A short epoch.** The profiler's cost is taken out of the window's steps against the
  unprofiled steps after it in the window's epoch (:meth:`_tfres_window.ProfilerWindow.timed`),
  :data:`_tfres_window.MIN_LATER` of them at least. A window that runs to its epoch's end
  leaves none: ``unseen57``'s dashcam ``PyDataset`` fit, 25 steps an epoch, read its input
  wait with the profiler's cost still in it (33% against 49%).
- **A short run.** Each traced step costs more than an unprofiled one (12% of a CRNN step,
  up to 45% of a step of many small ops), so a window of 20 steps in a ``fit`` of 30 costs
  a large share of its time: ``unseen71``'s 30-step glyph fit ran 3.4-5.0% slower under
  ``tfres run``.

:func:`fitted_last` ends such a window earlier: with :data:`_tfres_window.MIN_LATER`
unprofiled steps left in its epoch after the :data:`_tfres_window.SKIP_AFTER` that stop the
profiler, and over no more than :data:`RUN_SHARE` of the fit's steps, but never shorter than
:data:`_tfres_window.MIN_TRACED` steps (the fewest the time cap leaves, too). A window the
user asked for (``--profile``) runs whole.
"""

if __package__:  # tfres's own import (the Keras callback, the tests)
    from . import _tfres_window
else:  # the child's: the inject folder is on its path
    import _tfres_window  # type: ignore[no-redef]

#: the default window traces at most this share of a fit's train steps (once it has
#: traced :data:`_tfres_window.MIN_TRACED`)
RUN_SHARE = 0.1


def fitted_last(first, last, fit_start, steps_per_epoch, epochs=None):
    """The last step of a window of steps ``first``-``last`` in a ``fit`` whose steps are
    numbered from ``fit_start``, ``steps_per_epoch`` train steps (calls of the train
    function) an epoch over ``epochs`` epochs; ``last`` where the fit's length is not known
    or the window does not begin in it."""
    if not steps_per_epoch or steps_per_epoch < 1 or first < fit_start:
        return last
    total = steps_per_epoch * epochs if epochs else None
    if total is not None and first >= fit_start + total:
        return last
    epoch_end = fit_start + ((first - fit_start) // steps_per_epoch + 1) * steps_per_epoch - 1
    fitted = min(last, epoch_end - _tfres_window.SKIP_AFTER - _tfres_window.MIN_LATER)
    if total is not None:
        traced = max(_tfres_window.MIN_TRACED, int(total * RUN_SHARE))
        fitted = min(fitted, first + traced - 1)
    return max(fitted, min(last, first + _tfres_window.MIN_TRACED - 1))


def fit_window(window, fit_start, params, model=None):
    """Fit the default ``window`` (a :class:`_tfres_window.ProfilerWindow` with its caps,
    not yet begun) to the ``fit`` of ``model`` that begins at train step ``fit_start``, from
    its callbacks' ``params`` (:func:`train_calls`, :func:`fitted_last`)."""
    if window.state == "waiting" and window.max_seconds is not None:
        per = getattr(model, "steps_per_execution", 1) if model is not None else 1
        calls = train_calls(params, per)
        window.last = fitted_last(window.first, window.last, fit_start, *calls)


def train_calls(params, steps_per_execution=1):
    """(train steps an epoch, epochs) of a Keras ``fit`` from its callbacks' ``params``:
    its batches an epoch over ``steps_per_execution`` (a train step runs that many); None
    for what Keras does not know (a generator of unknown length)."""
    params = params or {}
    batches, epochs = params.get("steps"), params.get("epochs")
    per = max(1, int(steps_per_execution or 1))
    calls = -(-int(batches) // per) if isinstance(batches, int) and batches > 0 else None
    return calls, (epochs if isinstance(epochs, int) and epochs > 0 else None)
