# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Zero-code instrumentation of TensorFlow/Keras in a ``tfres run`` child (no tfres needed).

``sitecustomize`` imports this when ``TFRES_INSTRUMENT=1``. It installs import hooks and,
as the program imports them, wraps (never replaces) a few TensorFlow/Keras entry points:

- phases (``$TFRES_EVENTS_FILE``, JSON lines): ``import tensorflow`` (the import itself),
  ``set-up`` (from there to the first step: model build, compile, data), ``fit``, each
  ``fit epoch N``, ``epoch-end callbacks`` (the program's own, where they took 50 ms or
  more; ``epoch-end evaluation`` where they ran the model themselves), ``first step``
  (tracing/compiling), ``evaluate``, ``predict``,
  ``model save``/``checkpoint save``, ``after training``;
- steps (``$TFRES_STEPS_FILE``, the format of :mod:`tfres.watch.steps`): each Keras step
  (one execution of ``steps_per_execution`` batches) from one batch-begin to the next, and
  for custom loops each call of the hottest ``tf.function``;
- input wait: in Keras, a profiler window of :data:`DEFAULT_WINDOW` steps (or ``--profile``)
  read by :mod:`_tfres_xplane` (``IteratorGetNext`` time inside each step, and the GIL wait
  while the pipeline's Python runs); in custom loops,
  the time in ``next()`` of tf.data iterators between two calls of the hot function, or, for
  Python data, the time in generators and ``__next__``/``__getitem__`` in the gaps of the
  window (:mod:`_tfres_pyinput`).

Everything here is guarded: a failure becomes a ``note`` event and the program runs on.
"""

import atexit
import json
import os
import signal
import sys
import tempfile
import threading
import time

import _tfres_held

EVENTS_ENV = "TFRES_EVENTS_FILE"
STEPS_ENV = "TFRES_STEPS_FILE"
PROFILE_ENV = "TFRES_PROFILE"  # "A:B": train steps A..B into $TFRES_PROFILE_DIR
PROFILE_DIR_ENV = "TFRES_PROFILE_DIR"
CHECKPOINT_ENV = "TFRES_CHECKPOINT"
#: the default profiler window: train steps 5-24 (after tracing and the first warm steps)
DEFAULT_WINDOW = (5, 24)
#: a tf.function called this often is the step of a custom loop
HOT_CALLS = 5
_clock = time.monotonic


class _Lines:
    """Appends JSON lines to a file, each in one write that keeps the GIL
    (:func:`_tfres_held.write`: a step's line costs the step no wait for the pipeline's
    Python); the first failure disables it (and is remembered)."""

    def __init__(self, path):
        self.path = path
        self._fd = None
        self._lock = threading.Lock()

    def write(self, obj):
        if not self.path:
            return
        with self._lock:
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                _tfres_held.write(self._fd, (json.dumps(obj) + "\n").encode("utf-8"))
            except Exception:
                self.path = None


class Instrument:
    """The child's bookkeeping: phases, steps, notes, written as they happen."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.events = _Lines(env.get(EVENTS_ENV))
        self.steps = _Lines(env.get(STEPS_ENV))
        self.t_start = _clock()
        self.first_step = None
        self.last_work_end = None
        self.tf_import_end = None
        self.fit_steps = 0  # Keras fit steps: with any, no custom loop is the training
        self.window = _parse_window(env.get(PROFILE_ENV), self)
        self.profile_dir = env.get(PROFILE_DIR_ENV) or None
        self.checkpoint = env.get(CHECKPOINT_ENV) or None
        self.profiled = []  # (ProfilerWindow, user_asked), once stopped
        self.loops = {}  # id(function) -> _LoopStats
        self.iterator_wait = 0.0
        self.iterator_reads = 0  # the next() calls in iterator_wait (_tfres_iterators)
        self.saved_seconds = 0.0  # all saves so far: a step takes out those inside it
        self.noted = set()
        self.modules = set()
        self.other_import_end = {}  # "torch"/"jax" -> when its import ended

    def phase(self, name, start, end, **extra):
        line = {"event": "phase", "name": name, "start_monotonic": start, "end_monotonic": end}
        line.update(extra)
        self.events.write(line)

    def note(self, text):
        if text not in self.noted:
            self.noted.add(text)
            self.events.write({"event": "note", "text": text})

    def failed(self, where, err):
        self.note(
            "instrumentation: %s failed (%s: %s); the program ran on unchanged"
            % (where, type(err).__name__, err)
        )

    def step(self, kind, index, epoch, start, duration, batches=1, input_wait=None, callbacks=None):
        if self.first_step is None:
            self.first_step = start
            self.phase("set-up", self.tf_import_end or self.t_start, start)
        line = {
            "kind": kind,
            "step": index,
            "epoch": epoch,
            "batches": batches,
            "duration_seconds": round(duration, 9),
            "t_monotonic": round(start, 6),
            "t_wall": round(time.time() - (_clock() - start), 6),
        }
        if input_wait is not None:
            line["input_wait_seconds"] = round(input_wait, 9)
        if callbacks is not None:  # (seconds, bytes written or None): see _tfres_keras
            line["callback_seconds"] = round(callbacks[0], 9)
            if callbacks[1] is not None:
                line["callback_written_bytes"] = callbacks[1]
        self.steps.write(line)


def _parse_window(text, inst):
    if not text:
        return None
    try:
        a, b = (int(x) for x in text.split(":"))
        return (a, b)
    except ValueError:
        inst.note("TFRES_PROFILE=%r is not A:B; no profile written" % text) if inst else None
        return None


# ---------------------------------------------------------------- import hooks


class _PostImport:
    """A meta-path finder calling ``after(module, start, end)`` once ``name`` is imported."""

    def __init__(self, name, after):
        self.name = name
        self.after = after
        self._busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self._busy:
            return None
        import importlib.util

        self._busy = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original, after, finder = spec.loader.exec_module, self.after, self

        def exec_module(module):
            # one-shot once the module really runs (importlib.util.find_spec alone, as
            # TensorFlow's __init__ does for keras, only looks)
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            start = _clock()
            original(module)
            try:
                after(module, start, _clock())
            except Exception as err:
                INSTRUMENT.failed("after importing %s" % fullname, err)

        spec.loader.exec_module = exec_module
        return spec


def _after_tensorflow(tf, start, end):
    INSTRUMENT.tf_import_end = end
    INSTRUMENT.phase("import tensorflow", start, end)
    INSTRUMENT.modules.add("tensorflow")
    _start_allocator(tf)
    import _tfres_loops

    _tfres_loops.patch(tf)
    _patch_checkpoints(tf)


def timed_save(phase, original):
    """``original``, a save, timed as a ``phase``; a step takes its seconds out of its own
    (a save between two steps is not the step's work). A save inside another counts once."""

    def wrapper(*args, **kwargs):
        if _SAVING["depth"]:
            return original(*args, **kwargs)
        _SAVING["depth"] += 1
        start = _clock()
        try:
            return original(*args, **kwargs)
        finally:
            _SAVING["depth"] -= 1
            end = _clock()
            INSTRUMENT.phase(phase, start, end)
            INSTRUMENT.saved_seconds += end - start

    wrapper.__wrapped__ = original
    wrapper.__name__ = getattr(original, "__name__", phase)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    return wrapper


_SAVING = {"depth": 0}


class _WrittenBytes:
    """Bytes this process has written so far (``wchar`` of ``/proc/self/io``: every
    ``write`` call, to files, pipes and terminals), or None where the kernel does not say
    (not Linux, no task I/O accounting). A read is a few microseconds, the GIL held
    (:class:`_tfres_held.ProcFile`)."""

    def __init__(self):
        self._file = _tfres_held.ProcFile("/proc/self/io")

    def __call__(self):
        text = self._file.read()
        for line in (text or b"").split(b"\n"):
            if line.startswith(b"wchar:"):
                try:
                    return int(line.split()[1])
                except (IndexError, ValueError):
                    return None
        return None


written_bytes = _WrittenBytes()


def _patch_checkpoints(tf):
    """TensorFlow's own checkpoints (custom loops save through them) become phases too, and
    its SavedModel exports (``tf.saved_model.save``; Keras's ``Model.export``, which calls
    it, is a phase as a whole: :func:`_tfres_keras.patch_keras`)."""
    try:
        for cls, name in (
            (tf.train.Checkpoint, "save"),
            (tf.train.Checkpoint, "write"),
            (tf.train.CheckpointManager, "save"),
        ):
            setattr(cls, name, timed_save("checkpoint save", getattr(cls, name)))
        # where it is defined too: ``tf.saved_model`` is bound afresh from there on the
        # way into Keras's ``Model.export`` (seen on TF 2.21 / Keras 3.15)
        from tensorflow.python.saved_model import save as saved_model

        export = timed_save("model save", saved_model.save)
        saved_model.save = tf.saved_model.save = export
    except Exception as err:
        INSTRUMENT.failed("timing TensorFlow checkpoints", err)


def _start_allocator(tf):
    """TensorFlow's allocator, read once a second from inside (:mod:`_tfres_allocator`)."""
    try:
        from _tfres_allocator import start

        start(INSTRUMENT, tf)
    except Exception as err:
        INSTRUMENT.failed("starting the allocator readings", err)


def _after_keras(keras, start, end):
    INSTRUMENT.modules.add("keras")
    if getattr(keras, "_tfres_patched", False):
        return
    keras._tfres_patched = True
    try:
        from keras.src.version import __version__ as version
    except ImportError:
        version = str(getattr(keras, "__version__", "2"))
    if not version.startswith("3"):
        INSTRUMENT.note(
            "Keras %s is not Keras 3: its fit/evaluate/predict steps are not "
            "instrumented (custom-loop tf.functions still are)" % version
        )
        return
    from keras.src import backend

    if backend.backend() != "tensorflow":
        INSTRUMENT.note(
            "Keras runs on the %s backend: tfres instruments TensorFlow only" % backend.backend()
        )
        return
    from _tfres_keras import patch_keras

    patch_keras(keras, INSTRUMENT)
    try:
        import _tfres_loops
        import tensorflow as tf

        _tfres_loops.patch_optimizer(tf)
    except Exception as err:  # the loops' tf.functions are still timed
        INSTRUMENT.failed("timing eager optimizer steps", err)
    try:
        import _tfres_pauses
        import tensorflow as tf

        _tfres_pauses.patch_model(tf)
    except Exception as err:  # a loop's own evaluation is then not told from its steps
        INSTRUMENT.failed("timing eager model calls", err)
    try:
        import _tfres_tob

        _tfres_tob.patch(sys.modules[__name__])
    except Exception as err:  # a train_on_batch loop's input is read without it
        INSTRUMENT.failed("timing Keras's Python around train_on_batch", err)


#: frameworks tfres does not instrument, by module: their programs get a phase of their own
OTHER_FRAMEWORKS = {"torch": "PyTorch", "jax": "JAX"}


def _after_other(name):
    def after(module, start, end):
        INSTRUMENT.modules.add(name)
        if name not in INSTRUMENT.other_import_end:
            INSTRUMENT.other_import_end[name] = end
            INSTRUMENT.phase("import %s" % name, start, end)

    return after


# ---------------------------------------------------------------- custom loops


_IN_KERAS = threading.local()


# ---------------------------------------------------------------- the end


def _at_exit():
    try:
        # only what the program loaded (TensorFlow, Keras): nothing is imported at exit,
        # where a program stopped by SIGINT is finishing its KeyboardInterrupt
        loops = sys.modules.get("_tfres_loops")
        if loops is not None:
            loops.write_steps()
        keras_part = sys.modules.get("_tfres_keras_profile")
        if keras_part is not None:
            keras_part.finish_profiles(INSTRUMENT)
        elif INSTRUMENT.window is not None:
            window_not_reached(INSTRUMENT)
        now = _clock()
        if INSTRUMENT.last_work_end is not None:
            INSTRUMENT.phase("after training", INSTRUMENT.last_work_end, now)
        elif INSTRUMENT.first_step is None:
            other = _other_framework()
            if other is None:
                INSTRUMENT.phase("start-up", INSTRUMENT.t_start, now)
            else:  # its work is what follows the framework's import
                name, end = other
                INSTRUMENT.phase("start-up", INSTRUMENT.t_start, end)
                INSTRUMENT.phase("%s program" % OTHER_FRAMEWORKS[name], end, now)
            INSTRUMENT.note(_why_no_steps())
    except Exception as err:
        INSTRUMENT.failed("writing the phases at exit", err)


def window_not_reached(inst):
    """Note that ``--profile``'s window never started: the program ended before it."""
    inst.note(
        "--profile %d:%d: the program ended before train step %d; no profile written"
        % (inst.window[0], inst.window[1], inst.window[0])
    )


def _other_framework():
    """(module, import end) of the first PyTorch/JAX import in a program without TensorFlow."""
    if "tensorflow" in INSTRUMENT.modules or not INSTRUMENT.other_import_end:
        return None
    return min(INSTRUMENT.other_import_end.items(), key=lambda item: item[1])


def _why_no_steps():
    mods = INSTRUMENT.modules
    other = _other_framework()
    if other is not None:
        return (
            "no steps: the program uses %s; tfres instruments TensorFlow/Keras only, so all "
            "that follows `import %s` is one phase" % (OTHER_FRAMEWORKS[other[0]], other[0])
        )
    if "tensorflow" not in mods:
        return "no steps: the program never imported TensorFlow"
    if "keras" not in mods and not INSTRUMENT.loops:
        return "no steps: TensorFlow was imported but no Keras fit or tf.function ran"
    if INSTRUMENT.loops:
        return (
            "no steps: no Keras fit/evaluate/predict, and no tf.function was called %d times "
            "or more (TF1 sessions are not instrumented)" % HOT_CALLS
        )
    return "no steps: Keras was imported but fit/evaluate/predict never ran a step"


_MAIN = threading.main_thread()
INSTRUMENT = Instrument()


def install():
    """Install the import hooks and the exit handler (called by sitecustomize)."""
    if "tensorflow" in sys.modules:
        INSTRUMENT.note("TensorFlow was imported before tfres's hook; phases start late")
    sys.meta_path.insert(0, _PostImport("tensorflow", _after_tensorflow))
    sys.meta_path.insert(0, _PostImport("keras", _after_keras))
    for name in ("torch", "jax"):
        sys.meta_path.insert(0, _PostImport(name, _after_other(name)))
    atexit.register(_at_exit)
    if INSTRUMENT.checkpoint and hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # outside fit: the default behaviour


def _tmpdir():
    return tempfile.mkdtemp(prefix="tfres-profile-")
