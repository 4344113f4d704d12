# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""The Keras 3 part of the child's instrumentation (see :mod:`_tfres_instrument`).

``fit``/``evaluate``/``predict`` of ``TensorFlowTrainer`` get one more callback (first in the
list, ``async_safe`` so Keras keeps its asynchronous dispatch): a step runs from one
``on_*_batch_begin`` to the next (or to the end of its epoch), one execution of
``steps_per_execution`` batches; a train step's batch-end callbacks (the program's, after
this one's ``on_train_batch_end``) are timed inside it. Inside the profiler window
(:mod:`_tfres_keras_profile`) each train step is wrapped in
``tf.profiler.experimental.Trace("train", step_num=N, _r=1)``: the marker TensorBoard's
overview page needs, which Keras 3 does not write. ``Model.save``/``save_weights``/``export``
become phases. With ``$TFRES_CHECKPOINT`` set, SIGUSR1 during ``fit`` stops at the next batch,
saves the model there and exits with status 0 (through ``os._exit``, see
:func:`_exit_now`).
"""

import os
import signal
import sys
import threading
import time
import weakref

import _tfres_alone as alone
import _tfres_instrument as core
import _tfres_keras_profile as profile
import _tfres_pauses
import _tfres_window

_clock = time.monotonic
_KINDS = {"fit": "train", "evaluate": "test", "predict": "predict"}


def patch_keras(keras, inst):
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer
    from keras.src.models.model import Model

    callback_cls = _callback_class(keras, inst)
    for name in ("fit", "evaluate", "predict"):
        setattr(
            TensorFlowTrainer, name, _entry(name, getattr(TensorFlowTrainer, name), callback_cls)
        )
    # ``export`` whole: before its ``tf.saved_model.save`` it traces the model's serving
    # function, as long as the save itself or longer
    # (``unseen63/checkpoint_export_batchcb_roompricing``)
    saves = (("save", "model save"), ("save_weights", "checkpoint save"), ("export", "model save"))
    for name, phase in saves:
        if hasattr(Model, name):
            setattr(Model, name, core.timed_save(phase, getattr(Model, name)))
    try:
        import _tfres_xplane as xplane

        _tfres_window.mark_items(xplane.ITEM_MARKER)
    except Exception as err:
        inst.failed("marking the PyDataset workers' batches", err)


def _entry(kind, original, callback_cls):
    """fit/evaluate/predict with our callback first in ``callbacks`` (a list, not a
    CallbackList: fit's own validation passes its CallbackList, which has it already)."""
    position = 5 if kind == "fit" else (6 if kind == "evaluate" else 4)

    def wrapper(self, *args, **kwargs):
        cb = None
        try:
            if len(args) > position:
                given = args[position]
            else:
                given = kwargs.get("callbacks")
            if given is None or isinstance(given, (list, tuple)):
                cb = callback_cls(kind)
                chosen = [cb] + list(given or [])
                if kind == "fit":
                    _name_batch_callbacks(given or (), callback_cls.__mro__[1])
                if len(args) > position:
                    args = args[:position] + (chosen,) + args[position + 1 :]
                else:
                    kwargs["callbacks"] = chosen
        except Exception as err:
            core.INSTRUMENT.failed("adding the step callback to %s" % kind, err)
        core._IN_KERAS.depth = getattr(core._IN_KERAS, "depth", 0) + 1
        previous = _usr1_handler(self) if kind == "fit" and cb is not None else None
        alone.before_fit(self, core.INSTRUMENT, _stopping)
        called = _clock()
        try:
            result = original(self, *args, **kwargs)
            if kind == "fit":
                alone.after_fit(core.INSTRUMENT, _stopping)
        finally:
            core._IN_KERAS.depth -= 1
            if kind != "fit":  # evaluation in a batch callback is evaluation, not callbacks
                _EVALUATED["seconds"] += _clock() - called
            if previous is not None:
                signal.signal(signal.SIGUSR1, previous)
        if cb is not None and cb.stop_asked:
            _save_and_exit(self)
        return result

    wrapper.__wrapped__ = original
    wrapper.__name__ = original.__name__
    wrapper.__doc__ = original.__doc__
    return wrapper


#: the hooks that run between a train step's end and its close (see TfresSteps._callbacks)
_BATCH_END_HOOKS = ("on_train_batch_end", "on_batch_end")
_NAMED = set()  # type: set[str]


def _name_batch_callbacks(callbacks, base):
    """Send the names of the program's callbacks with a batch-end hook, once each
    (``NpzSnapshot.on_train_batch_end``): the suspects when those callbacks take much of a
    step."""
    names = []
    for cb in callbacks:
        for hook in _BATCH_END_HOOKS:
            own = getattr(type(cb), hook, None)
            if own is not None and own is not getattr(base, hook, None):
                names.append("%s.%s" % (type(cb).__name__, hook))
    new = [n for n in names if n not in _NAMED]
    if new:
        _NAMED.update(new)
        core.INSTRUMENT.events.write({"event": "batch_callbacks", "names": new})


def _usr1_handler(model):
    """With $TFRES_CHECKPOINT, SIGUSR1 during fit asks the fit to stop at the next batch."""
    inst = core.INSTRUMENT
    if not inst.checkpoint or not hasattr(signal, "SIGUSR1"):
        return None
    if sys.modules["threading"].current_thread() is not core._MAIN:
        return None

    def on_usr1(signum, frame):
        model.stop_training = True
        _STOP["asked"] = True

    _STOP["asked"] = False
    return signal.signal(signal.SIGUSR1, on_usr1)


_STOP = {"asked": False}


def _stopping():
    return _STOP["asked"]


_COUNTS = {}  # type: dict[str, int]
_EVALUATED = {"seconds": 0.0}  # all evaluate/predict calls so far


def _save_and_exit(model):
    path = core.INSTRUMENT.checkpoint
    start = _clock()
    core._SAVING["depth"] += 1  # one phase for this save, with its reason
    try:
        if path.endswith(".weights.h5"):
            model.save_weights(path)
        elif path.endswith(".keras") or path.endswith(".h5"):
            model.save(path)
        else:
            import tensorflow as tf

            tf.train.Checkpoint(model=model).write(path)
        core.INSTRUMENT.phase("checkpoint save", start, _clock(), reason="SIGUSR1")
        core.INSTRUMENT.note("stopped at a batch boundary on SIGUSR1 and saved %s" % path)
    except Exception as err:
        core.INSTRUMENT.failed("saving the checkpoint to %s" % path, err)
        _exit_now(1)
    _exit_now(0)


def _exit_now(status):
    """Exit as ``sys.exit`` would, less the interpreter's teardown.

    The program's ``atexit`` handlers (tfres's record among them) run and the streams are
    flushed; then ``os._exit``. Unwinding or tearing down a fit fed by ``from_generator`` can
    hang for good: the iterator's destructor, on the main thread with the GIL, waits for its
    prefetch thread, which waits for the GIL (1 stop in 3 to 8 here). Garbage collection is
    off meanwhile, so no cycle holding that iterator is freed by the handlers either. The
    program's own ``finally`` blocks after ``fit`` do not run; the docs say so.
    """
    import atexit
    import gc

    gc.disable()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status)


#: model -> the kinds (evaluate, predict) whose first batch it ran; weak, so a model built
#: after another was dropped (a model zoo's loop) is not taken for it by a reused id()
_TRACED = weakref.WeakKeyDictionary()  # type: weakref.WeakKeyDictionary


def _first_call(model, kind):
    """Whether this is the first evaluate or predict batch of ``model``."""
    kinds = _TRACED.setdefault(model, set())
    if kind in kinds:
        return False
    kinds.add(kind)
    return True


def _callback_class(keras, inst):
    class TfresSteps(keras.callbacks.Callback):
        """tfres's step timer (added by ``tfres run``; removed by ``--no-instrument``)."""

        async_safe = True

        def __init__(self, kind):
            super().__init__()
            self.kind = kind
            self.epoch = None
            self.open = None  # (kind, index, epoch, start, saves so far)
            self.counts = _COUNTS  # per process: step numbers go on across fit calls
            self.epoch_start = None
            self.begun = {}
            self.returned = None  # fit: (when, saves, bytes written) as the step returned
            self.thread = None  # the thread that began the open step

        @property
        def stop_asked(self):
            return self.kind == "fit" and _STOP["asked"]

        # -- steps
        def _begin(self, kind, batch):
            try:
                now = _clock()
                self._close(now)
                index = self.counts.get(kind, 0)
                self.counts[kind] = index + 1
                saved = inst.saved_seconds  # saves from here on are not the step's time
                self.open = (kind, index, self.epoch if kind == "fit" else None, now, saved)
                self.returned = None
                self.thread = threading.get_ident()
                if kind == "fit":
                    profile.window_step(index, self.model)
            except Exception as err:
                inst.failed("timing a Keras step", err)

        def _close(self, now):
            if self.open is None:
                return
            kind, index, epoch, start, saved = self.open
            self.open = None
            callbacks = self._callbacks(now)
            profile.end_step()
            per = int(getattr(self.model, "steps_per_execution", 1) or 1) if self.model else 1
            if kind == "fit":  # a custom loop that runs evaluate() is still the training
                inst.fit_steps += 1
            duration = max(0.0, now - start - (inst.saved_seconds - saved))
            inst.step(kind, index, epoch, start, duration, batches=per, callbacks=callbacks)
            if kind == "fit":
                profile.timed(index, epoch, duration)
            if index == 0 and kind == "fit":
                inst.phase("first step", start, now)
            elif kind != "fit" and _first_call(self.model, kind):
                # its first batch traces the model's evaluate/predict function: one-time
                inst.phase("first %s step" % kind, start, now)
            inst.last_work_end = now

        def on_train_batch_begin(self, batch, logs=None):
            self._begin("fit", batch)

        # -- the batch-end callbacks: this one is first in the list, so from its
        # on_train_batch_end to the step's close the others run (the progress bar and the
        # program's own); where Keras dispatches them to a thread pool (all async-safe),
        # they do not hold the step and are not timed
        def on_train_batch_end(self, batch, logs=None):
            try:
                if self.open is not None and threading.get_ident() == self.thread:
                    self.returned = (
                        _clock(),
                        inst.saved_seconds + _EVALUATED["seconds"],
                        core.written_bytes(),
                    )
            except Exception as err:
                inst.failed("timing the batch-end callbacks", err)

        def _callbacks(self, now):
            """(seconds, bytes written or None) of the batch-end callbacks of the step
            closing at ``now``, less the known saves and the evaluate/predict calls among
            them (phases of their own); None where not timed."""
            returned, self.returned = self.returned, None
            if returned is None:
                return None
            at, known, written = returned
            known = inst.saved_seconds + _EVALUATED["seconds"] - known
            seconds = max(0.0, now - at - known)
            after = core.written_bytes() if written is not None else None
            return (seconds, None if after is None else max(0, after - written))

        def on_test_batch_begin(self, batch, logs=None):
            self._begin("evaluate", batch)

        def on_predict_batch_begin(self, batch, logs=None):
            self._begin("predict", batch)

        # -- phases
        def _start(self, kind):
            self._close(_clock())
            self.begun[kind] = _clock()

        def _end(self, kind, name=None, min_seconds=0.0):
            now = _clock()
            self._close(now)
            start = self.begun.pop(kind, None)
            if start is not None and now - start >= min_seconds:
                inst.phase(name or kind, start, now)
                inst.last_work_end = now

        def on_train_begin(self, logs=None):
            self._start("fit")
            try:
                profile.fit_window(self.counts.get("fit", 0), self.params, self.model)
            except Exception as err:
                inst.failed("fitting the profiler window to the fit", err)

        # the program's own on_epoch_end callbacks run from this callback's (the first in
        # the list) to the next epoch's start or the fit's end: a phase where they took
        # EPOCH_END_SECONDS or more (an evaluation callback's metrics in NumPy, a plot, a
        # save), its evaluation where they ran the model outside evaluate/predict
        def _end_epoch_end(self):
            runs = _tfres_pauses.end_epoch_runs()
            name = EPOCH_END_EVAL if runs >= _tfres_pauses.MIN_CALLS else EPOCH_END
            self._end("epoch end", name, EPOCH_END_SECONDS)

        def on_train_end(self, logs=None):
            self._end_epoch_end()
            profile.stop_window()
            self._end("fit")

        def on_epoch_begin(self, epoch, logs=None):
            self._end_epoch_end()
            self.epoch = epoch
            self._start("epoch")

        def on_epoch_end(self, epoch, logs=None):
            self._end("epoch", "fit epoch %d" % epoch)
            self._start("epoch end")
            _tfres_pauses.start_epoch_runs()

        def on_test_begin(self, logs=None):
            self._start("evaluate")

        def on_test_end(self, logs=None):
            self._end("evaluate", "evaluate" if self.kind == "evaluate" else "validation")

        def on_predict_begin(self, logs=None):
            self._start("predict")

        def on_predict_end(self, logs=None):
            self._end("predict")

    return TfresSteps


#: the phase of the program's ``on_epoch_end`` callbacks, written where they took at least
#: ``EPOCH_END_SECONDS`` (shorter ones would fill the timeline with nothing to see)
EPOCH_END = "epoch-end callbacks"
EPOCH_END_SECONDS = 0.05
#: ...named so where they ran the model at least ``_tfres_pauses.MIN_CALLS`` times outside
#: Keras's evaluate and predict (eagerly or in a tf.function of their own): the program's
#: evaluation, all of it (MC-dropout passes over a holdout, a retrieval over embeddings)
EPOCH_END_EVAL = "epoch-end evaluation"
