"""Experiment: is the step's untraced "other" time the main thread waiting for the GIL?

Put this folder first on PYTHONPATH (with the harness's folder for ``truth``) and run an
accuracy script as it is, no tfres::

    PYTHONPATH=benchmarks/accuracy/tuning/experiments/between_calls:benchmarks/accuracy \\
        .venv/bin/python benchmarks/accuracy/heldout/input_generator_tokenize.py

Every Keras ``fit`` gets one more callback that wraps ``model.train_function`` and reads the
main thread's clock, CPU time and run-queue wait (``/proc/thread-self/schedstat``) at each
batch begin and around each call. From step 5 on, per step, the part outside TensorFlow's
call (Keras's loop and callbacks, where the main thread holds the GIL) is split into
on-CPU, waiting for a core and asleep (the GIL, or anything else). One line per ``fit`` on
stderr, medians in ms.

``SWITCH_INTERVAL=S`` sets ``sys.setswitchinterval(S)`` first (Python's default is 0.005 s):
how long a thread holding the GIL keeps it once another thread asks for it. Time that
grows and shrinks with it is time spent waiting for the GIL.
"""

import builtins
import os
import statistics
import sys
import time

if os.environ.get("SWITCH_INTERVAL"):
    sys.setswitchinterval(float(os.environ["SWITCH_INTERVAL"]))


def _schedstat():
    with open("/proc/thread-self/schedstat") as fh:
        cpu_ns, delay_ns = fh.read().split()[:2]
    return int(cpu_ns) / 1e9, int(delay_ns) / 1e9


def _mark():
    cpu, delay = _schedstat()
    return time.perf_counter(), cpu, delay


def _callback():
    import keras

    class BetweenCalls(keras.callbacks.Callback):
        async_safe = True

        def on_train_begin(self, logs=None):
            self.calls, self.marks = [], []
            function = self.model.train_function

            def timed(iterator):
                start = _mark()
                try:
                    return function(iterator)
                finally:
                    end = _mark()
                    self.calls.append(tuple(b - a for a, b in zip(start, end, strict=True)))

            self.model.train_function = timed

        def on_train_batch_begin(self, batch, logs=None):
            self.marks.append(_mark())

        def on_train_end(self, logs=None):
            self.marks.append(_mark())
            rows = []
            for i in range(5, len(self.marks) - 1):
                step = [b - a for a, b in zip(self.marks[i], self.marks[i + 1], strict=True)]
                call = self.calls[i]
                wall, cpu, delay = (s - c for s, c in zip(step, call, strict=True))
                rows.append((step[0], call[0], wall, cpu, delay, wall - cpu - delay))
            if rows:
                step, in_call, wall, cpu, queue, asleep = (
                    statistics.median(r[j] for r in rows) * 1e3 for j in range(6)
                )
                sys.stderr.write(
                    f"switch={sys.getswitchinterval()} steps={len(rows)} step={step:.2f} "
                    f"in_call={in_call:.2f} outside: "
                    f"wall={wall:.2f} cpu={cpu:.2f} run_queue={queue:.2f} asleep={asleep:.2f} ms\n"
                )

    return BetweenCalls()


def _patch_fit():
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    original = TensorFlowTrainer.fit

    def fit(self, *args, **kwargs):
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [_callback()]
        return original(self, *args, **kwargs)

    TensorFlowTrainer.fit = fit


_import = builtins.__import__


def _hook(name, *args, **kwargs):
    module = _import(name, *args, **kwargs)
    if name == "keras" and not getattr(_hook, "done", False):
        _hook.done = True
        _patch_fit()
    return module


builtins.__import__ = _hook
