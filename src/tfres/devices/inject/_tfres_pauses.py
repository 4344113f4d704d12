# ruff: noqa: UP004, UP031  (child-side: the style of sitecustomize.py, no tfres imports)
"""A custom loop's own evaluation: the pauses between its steps where the model runs.

A custom loop's step runs from the end of its previous call to the end of this one. A loop
that evaluates in its own code (a Python loop over a test set calling ``model(x,
training=False)`` and updating ``keras.metrics``, or an ``eval_step`` tf.function) calls no
Keras ``evaluate`` to hook: its evaluation sat inside the step after it. In
``unseen26/eval_churn_telecom`` three steps of 2.2-3.6 s among steps of 8 ms held 9.2 s of
evaluation in a 14.5 s loop, and the run read compute-bound.

A step pauses where the time outside its call is at least :data:`PAUSE_RATIO` times the
loop's median such time and :data:`MIN_PAUSE_SECONDS`; the pause is the loop's evaluation
where the model ran at least :data:`MIN_CALLS` times in it outside the training step: eager
calls of a Keras model not for training (:func:`patch_model`), or calls of another
tf.function, one that applies no optimizer (:func:`traced_training`). Such a pause becomes a
phase of its own (:data:`PHASE`) and leaves the step's time; the step's input wait is then
not a reading (its ``next()`` time holds the test set's reads too).

The same mark tells the training step from an evaluation step called more often: the hot
loop is the most-called function among those that train (:func:`trains`).

``fit``'s own epoch-end callbacks are told the same way: where the program's ``on_epoch_end``
ran the model at least :data:`MIN_CALLS` times outside Keras's ``evaluate``/``predict``
(eager calls of a Keras model, or calls of a tf.function), they were its evaluation
(:func:`counted_in_epoch_end`). In ``unseen61/eval_mcdropout_callback_alloyfatigue`` a callback
ran a ``tf.function`` of ``model(x, training=True)`` 360 times an epoch (MC dropout over a
holdout), 69% of the run, and the run read CPU-bound.
"""

import bisect
import threading

import _tfres_instrument as core

#: the phase a loop's own evaluation becomes (tfres.diagnosis.rules.phases reads it)
PHASE = "loop evaluation"
#: a pause: the time outside the step's call, this many times the loop's median...
PAUSE_RATIO = 10.0
#: ...and at least this long
MIN_PAUSE_SECONDS = 0.2
#: model runs in a pause that make it evaluation (one is a sample printed, a plot)
MIN_CALLS = 3
_MAX_CALLS = 200000

#: (start, end) of each eager call of a Keras model made on the main thread outside Keras's
#: fit/evaluate/predict and not with ``training=True``
MODEL_CALLS = []  # type: list
#: the model's runs in the program's epoch-end callbacks (``fit``'s, see
#: ``_tfres_keras``): None while none run, else how many so far
EPOCH_RUNS = [None]  # type: list
#: the names of the tf.functions whose graphs apply an optimizer: the training steps
TRAINING_GRAPHS = set()  # type: set
_IN_CALL = threading.local()


def patch_model(tf):
    """Time eager calls of Keras models that are not training (a nested model's counted once)."""
    from keras.src.models.model import Model

    original = Model.__call__

    def __call__(self, *args, **kwargs):
        if (
            getattr(_IN_CALL, "active", False)
            or threading.current_thread() is not core._MAIN
            or not tf.executing_eagerly()
        ):
            return original(self, *args, **kwargs)
        if counted_in_epoch_end():  # fit's epoch-end callbacks: a run, whatever ``training``
            _IN_CALL.active = True
            try:
                return original(self, *args, **kwargs)
            finally:
                _IN_CALL.active = False
        if kwargs.get("training") is True or getattr(core._IN_KERAS, "depth", 0):
            return original(self, *args, **kwargs)
        _IN_CALL.active = True
        start = core._clock()
        try:
            return original(self, *args, **kwargs)
        finally:
            _IN_CALL.active = False
            if len(MODEL_CALLS) < _MAX_CALLS:
                MODEL_CALLS.append((start, core._clock()))

    Model.__call__ = __call__


def start_epoch_runs():
    """Start counting the model's runs in ``fit``'s epoch-end callbacks."""
    EPOCH_RUNS[0] = 0


def end_epoch_runs():
    """Stop counting them; the runs counted since the start (0 where none was)."""
    runs, EPOCH_RUNS[0] = EPOCH_RUNS[0] or 0, None
    return runs


def counted_in_epoch_end():
    """Count a run of the model made now, if it is one of the program's epoch-end
    callbacks' (on the main thread, ``fit`` the only Keras call under way: not its own
    evaluate or predict, which are phases of their own). True where counted."""
    if (
        EPOCH_RUNS[0] is None
        or getattr(core._IN_KERAS, "depth", 0) != 1
        or threading.current_thread() is not core._MAIN
    ):
        return False
    EPOCH_RUNS[0] += 1
    return True


def traced_training(tf):
    """An optimizer is applied while a tf.function is traced: mark its graphs as training
    (a ``strategy.run`` replica's graph and the function's that holds it)."""
    graph = tf.compat.v1.get_default_graph()
    while graph is not None:
        name = getattr(graph, "name", None)
        if name:
            TRAINING_GRAPHS.add(name)
        graph = getattr(graph, "outer_graph", None)


def trains(stats):
    """Whether a loop's function applies an optimizer (an eager loop's step does)."""
    return stats.eager or stats.name in TRAINING_GRAPHS


def find(hot, loops):
    """The loop's evaluation: {step index: (start, end, runs)} for each pause of ``hot``'s
    steps that is evaluation, from the end of the previous call to the end of the model's
    last run in it; and the evaluation after its last step (start, end, runs), or None.
    ``loops``: every function's stats; those that do not train run the model too."""
    runs = _model_runs(hot, loops)
    starts = [start for start, _ in runs]
    after = runs[bisect.bisect_left(starts, hot.last_end) :] if hot.last_end else []
    trailing = None
    if len(after) >= MIN_CALLS:
        trailing = (hot.last_end, max(end for _, end in after), len(after))
    outside = sorted(step[1] - step[3] for step in hot.steps[1:])
    if len(outside) < core.HOT_CALLS:
        return {}, trailing
    threshold = max(MIN_PAUSE_SECONDS, PAUSE_RATIO * outside[len(outside) // 2])
    pauses = {}
    for i, step in enumerate(hot.steps[1:], 1):  # the first call's gap is the set-up
        begin, gap = step[0], step[1] - step[3]
        if gap < threshold:
            continue
        inside = runs[bisect.bisect_left(starts, begin) : bisect.bisect_left(starts, begin + gap)]
        if hot.eager:
            inside = inside[:-1]  # an eager step's own forward pass comes last
        if len(inside) >= MIN_CALLS:
            pauses[i] = (begin, max(end for _, end in inside), len(inside))
    return pauses, trailing


def _model_runs(hot, loops):
    """(start, end) of each run of the model outside the training step, in time order."""
    runs = list(MODEL_CALLS)
    for stats in loops:
        if stats is not hot and not trains(stats):
            runs += [(s[0] + s[1] - s[3], s[0] + s[1]) for s in stats.steps]
    return sorted(runs)


def write(hot, pauses, trailing, instrument):
    """Each pause, and the evaluation after the last step, as a phase; a note of what was
    read. Returns when the loop's work ended."""
    spans = list(pauses.values()) + ([trailing] if trailing else [])
    for start, end, _ in spans:
        instrument.phase(PHASE, start, end, function=hot.name)
    if spans:
        instrument.note(
            "custom loop %s: the model ran %d times outside its training step (eager model "
            "calls or another tf.function) in %d pause(s) between its steps or after the "
            "last, %.1f s in all: read as the loop's evaluation, a phase of its own, out of "
            "the steps' time"
            % (
                hot.name,
                sum(runs for _, _, runs in spans),
                len(spans),
                sum(end - start for start, end, _ in spans),
            )
        )
    return trailing[1] if trailing else hot.last_end
