# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""Zero-code instrumentation of TensorFlow/Keras in a ``tfres run`` child (no tfres needed).

``sitecustomize`` imports this when ``TFRES_INSTRUMENT=1``. It installs import hooks and,
as the program imports them, wraps (never replaces) a few TensorFlow/Keras entry points:

- phases (``$TFRES_EVENTS_FILE``, JSON lines): ``import tensorflow`` (the import itself),
  ``set-up`` (from there to the first step: model build, compile, data), ``fit``, each
  ``fit epoch N``, ``first step`` (tracing/compiling), ``evaluate``, ``predict``,
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

from _tfres_pyinput import GapTimer

EVENTS_ENV = "TFRES_EVENTS_FILE"
STEPS_ENV = "TFRES_STEPS_FILE"
PROFILE_ENV = "TFRES_PROFILE"  # "A:B": train steps A..B into $TFRES_PROFILE_DIR
PROFILE_DIR_ENV = "TFRES_PROFILE_DIR"
CHECKPOINT_ENV = "TFRES_CHECKPOINT"
#: the default profiler window: train steps 5-24 (after tracing and the first warm steps)
DEFAULT_WINDOW = (5, 24)
#: a tf.function called this often is the step of a custom loop
HOT_CALLS = 5
_MAX_LOOP_STEPS = 200000
_clock = time.monotonic


class _Lines:
    """Appends JSON lines to a file; the first failure disables it (and is remembered)."""

    def __init__(self, path):
        self.path = path
        self._fh = None
        self._lock = threading.Lock()

    def write(self, obj):
        if not self.path:
            return
        with self._lock:
            try:
                if self._fh is None:
                    self._fh = open(self.path, "a")
                self._fh.write(json.dumps(obj) + "\n")
                self._fh.flush()
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
        self.keras_steps = 0
        self.window = _parse_window(env.get(PROFILE_ENV), self)
        self.profile_dir = env.get(PROFILE_DIR_ENV) or None
        self.checkpoint = env.get(CHECKPOINT_ENV) or None
        self.profiled = []  # (logdir, user_asked, window)
        self.loops = {}  # id(function) -> _LoopStats
        self.iterator_wait = 0.0
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

    def step(self, kind, index, epoch, start, duration, batches=1, input_wait=None):
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
    _patch_tf_function(tf)
    _patch_iterator()
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


def _patch_checkpoints(tf):
    """TensorFlow's own checkpoints (custom loops save through them) become phases too."""
    try:
        for cls, name in (
            (tf.train.Checkpoint, "save"),
            (tf.train.Checkpoint, "write"),
            (tf.train.CheckpointManager, "save"),
        ):
            setattr(cls, name, timed_save("checkpoint save", getattr(cls, name)))
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


class _LoopStats:
    __slots__ = (
        "name",
        "calls",
        "steps",
        "last_end",
        "first_start",
        "function",
        "alone",
        "saved_mark",
    )

    def __init__(self, name, function):
        self.name = name
        self.calls = 0
        #: (begin, step seconds, input wait or None, seconds inside the call, from tf.data)
        self.steps = []
        self.last_end = None
        self.first_start = None
        self.function = function
        self.alone = None  # the window's first call, to time alone at exit (_tfres_alone)
        self.saved_mark = INSTRUMENT.saved_seconds  # saves before the step are not its own


_IN_KERAS = threading.local()


def _patch_tf_function(tf):
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as pf

    cls = pf.Function
    original = cls.__call__

    def __call__(self, *args, **kwargs):
        if getattr(_IN_KERAS, "depth", 0) or threading.current_thread() is not _MAIN:
            return original(self, *args, **kwargs)
        start = _clock()
        python_wait = _GAP.stop()  # Python input since the previous call, where it was timed
        wait, INSTRUMENT.iterator_wait = INSTRUMENT.iterator_wait, 0.0
        try:
            return original(self, *args, **kwargs)
        finally:
            try:
                stats = _loop_call(
                    self, start, _clock(), wait if wait > 0 else python_wait, wait > 0
                )
                if stats.calls == (INSTRUMENT.window or DEFAULT_WINDOW)[0]:
                    _keep_call(stats, original, args, kwargs)
            except Exception as err:
                INSTRUMENT.failed("timing a tf.function", err)

    cls.__call__ = __call__


def _loop_call(fn, start, end, wait, from_tf_data):
    """One call of a tf.function; ``wait``: the input seconds before it (tf.data iterators
    read, or Python input timed by the gap timer), None where nothing timed it."""
    stats = INSTRUMENT.loops.get(id(fn))
    if stats is None:
        stats = INSTRUMENT.loops[id(fn)] = _LoopStats(getattr(fn, "__name__", "tf.function"), fn)
    stats.calls += 1
    # a step runs from the end of the previous call to the end of this one
    begin = stats.last_end if stats.last_end is not None else start - (wait or 0.0)
    if stats.first_start is None:
        stats.first_start = begin
    saved, stats.saved_mark = INSTRUMENT.saved_seconds - stats.saved_mark, INSTRUMENT.saved_seconds
    if len(stats.steps) < _MAX_LOOP_STEPS:
        duration = max(0.0, end - begin - saved)
        stats.steps.append((begin, duration, wait, end - start, from_tf_data))
    stats.last_end = end
    _time_python_input(stats, end - begin)
    return stats


def _keep_call(stats, call, args, kwargs):
    """Keep the arguments of the window's first call of a function, to time the function
    alone on them at exit (before TensorFlow's own exit handlers, registered earlier)."""
    import _tfres_alone as alone

    stats.alone = alone.LoopCallAlone(stats.function, call, args, kwargs, INSTRUMENT.note)
    if not _LOOP_AT_EXIT:
        _LOOP_AT_EXIT.append(True)
        atexit.register(_time_loop_alone)


def _time_loop_alone():
    """At exit: the hot function alone on its kept arguments (see _tfres_alone)."""
    hot = _hot_loop()
    for stats in INSTRUMENT.loops.values():
        if stats is not hot:
            stats.alone = None  # let go of their arguments
    if hot is None or hot.alone is None:
        return
    import _tfres_alone as alone

    start = _clock()
    try:
        calls = hot.alone.measure(alone.BUDGET_SECONDS)
    except Exception as err:
        hot.alone = None
        INSTRUMENT.failed("timing the loop's step alone", err)
        return
    if calls:
        INSTRUMENT.events.write(
            {
                "event": "step_alone",
                "kind": "loop",
                "seconds": round(_loop_alone_seconds(hot), 9),
                "plain_calls_seconds": [round(t, 9) for t in calls],
                "cost_seconds": round(_clock() - start, 6),
                "start_monotonic": start,
            }
        )


def _time_python_input(stats, step_seconds):
    """Time the Python input before the next call when it falls in the window (steps A..B,
    counted from 0 like Keras's): only there does the profile hook run, and only in the gap;
    a gap 20 times longer than this step (the loop ended) is not measured."""
    first, last = INSTRUMENT.window or DEFAULT_WINDOW
    if INSTRUMENT.keras_steps or not first <= stats.calls <= last:
        return
    if not _GAP.start(limit_seconds=max(2.0, 20 * step_seconds)):  # a profiler of its own
        INSTRUMENT.note(
            "the program runs its own Python profiler (sys.setprofile): the Python input of "
            "custom loops was not timed"
        )


def _patch_iterator():
    from tensorflow.python.data.ops import iterator_ops

    cls = iterator_ops.OwnedIterator
    original = cls.__next__

    def __next__(self):
        start = _clock()
        try:
            return original(self)
        finally:
            INSTRUMENT.iterator_wait += _clock() - start

    cls.__next__ = __next__


def _loop_alone_seconds(stats):
    """The loop's function alone (lower quartile of its timed calls), or None."""
    import _tfres_xplane as xplane

    times = stats.alone.times if stats.alone is not None else []
    return xplane.lower_quartile(times) if times else None


def _hot_loop():
    """The custom loop's step: the tf.function called most (at least HOT_CALLS times) in a
    program with no Keras step; None otherwise."""
    if INSTRUMENT.keras_steps or not INSTRUMENT.loops:
        return None
    hot = max(INSTRUMENT.loops.values(), key=lambda s: s.calls)
    return hot if hot.calls >= HOT_CALLS else None


def _write_loop_steps():
    hot = _hot_loop()
    if hot is None:
        return
    import _tfres_xplane as xplane

    measured = any(step[2] is not None for step in hot.steps)
    alone = _loop_alone_seconds(hot)
    for i, (begin, duration, wait, call, from_tf_data) in enumerate(hot.steps):
        wait = xplane.loop_step_input(wait, duration, call, from_tf_data, alone)
        INSTRUMENT.step("loop", i, None, begin, duration, input_wait=wait)
    INSTRUMENT.phase("first step", hot.steps[0][0], hot.steps[0][0] + hot.steps[0][1])
    INSTRUMENT.phase("training loop", hot.first_start, hot.last_end, function=hot.name)
    INSTRUMENT.last_work_end = max(INSTRUMENT.last_work_end or 0, hot.last_end)
    if not measured:
        INSTRUMENT.note(
            "custom loop %s: its input wait was not measured (no tf.data iterator was read "
            "between its calls, and no gap in the window was timed)" % hot.name
        )


# ---------------------------------------------------------------- the end


def _at_exit():
    try:
        _write_loop_steps()
        from _tfres_keras import finish_profiles

        finish_profiles(INSTRUMENT)
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
_LOOP_AT_EXIT = []  # type: list
INSTRUMENT = Instrument()
_GAP = GapTimer(_clock)


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
