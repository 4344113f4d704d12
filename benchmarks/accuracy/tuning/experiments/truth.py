"""Issue 11 experiment: a stand-in for ``benchmarks/accuracy/truth.py`` that, in ONE process,
times the full step and the cached-batch step, each with and without a profiler window marked
the way tfres's hook marks it (steps 5-24, ``Trace("train", step_num=N, _r=1)``), and splits
the traced steps with tfres's own trace reader (input = IteratorGetNext, compute, other).

    PYTHONPATH=benchmarks/accuracy/tuning/experiments .venv/bin/python \
        benchmarks/accuracy/scripts/input_slow_generator.py --truth

Prints ``EXP`` (fractions: truth over the whole fit call, truth over steps 5-24, truth over
step 5 to the end, truth with both sides traced, the trace's measured fraction) and ``EXPMS``
(medians, ms per step). Tuning only: never point it at ``heldout/``."""

import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(
    0,
    os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "..",
        "..",
        "..",
        "..",
        "src",
        "tfres",
        "devices",
        "inject",
    ),
)
TRUTH = True


def report(**values):
    pass


def timed_fit(model, data, steps, **kw):
    model.fit(data, steps_per_epoch=min(steps, 10), epochs=1, verbose=0, **kw)


def _cb(traced, lo=5, hi=25):
    import keras
    import tensorflow as tf

    class CB(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.t = []
            self.tr = None
            self.logdir = None

        def on_train_batch_begin(self, b, logs=None):
            if self.tr is not None:
                self.tr.__exit__(None, None, None)
                self.tr = None
            self.t.append(time.perf_counter())
            if traced and b == lo:
                self.logdir = tempfile.mkdtemp()
                tf.profiler.experimental.start(self.logdir)
            if traced and lo <= b < hi:
                self.tr = tf.profiler.experimental.Trace("train", step_num=b, _r=1)
                self.tr.__enter__()
            if traced and b == hi:
                tf.profiler.experimental.stop()

    return CB()


def measure(model, make_data, steps, repeats=3):
    import _tfres_xplane as X
    import tensorflow as tf

    steps = max(steps, 40)
    batch = next(iter(make_data()))
    cached = tf.data.Dataset.from_tensors(tuple(batch)).repeat()
    model.fit(cached, steps_per_epoch=5, verbose=0)
    out = {}
    for _r in range(int(os.environ.get("REPS", repeats))):
        for traced in (False, True):
            for name in ("full", "cached"):
                data = make_data() if name == "full" else cached
                cb = _cb(traced)
                t0 = time.perf_counter()
                model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[cb])
                call = (time.perf_counter() - t0) / steps
                win = (cb.t[25] - cb.t[5]) / 20
                late = (cb.t[-1] - cb.t[5]) / (len(cb.t) - 6)
                key = name + ("_traced" if traced else "")
                out.setdefault(key + "_call", []).append(call)
                out.setdefault(key + "_win", []).append(win)
                out.setdefault(key + "_late", []).append(late)
                if traced:
                    s = X.summary(X.step_breakdown(X.latest_xplane(cb.logdir)))
                    n = s["steps"]
                    for k in (
                        "duration_seconds",
                        "input_seconds",
                        "compute_seconds",
                        "other_seconds",
                    ):
                        out.setdefault(key + "_" + k.split("_")[0], []).append(s[k] / n)
    med = {k: statistics.median(v) * 1e3 for k, v in out.items()}
    f, c = med["full_call"], med["cached_call"]
    res = {
        "truth_call": (f - c) / f,
        "truth_win": (med["full_win"] - med["cached_win"]) / med["full_win"],
        "truth_late": (med["full_late"] - med["cached_late"]) / med["full_late"],
        "truth_traced_win": (med["full_traced_duration"] - med["cached_traced_duration"])
        / med["full_traced_duration"],
        "measured": med["full_traced_input"] / med["full_traced_duration"],
    }
    print(
        "EXP", os.path.basename(sys.argv[0]), json.dumps({k: round(v, 3) for k, v in res.items()})
    )
    print("EXPMS", json.dumps({k: round(v, 2) for k, v in sorted(med.items())}))
