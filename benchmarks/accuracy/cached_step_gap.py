"""A cached step inside ``fit`` against direct calls of the train function on one batch.

The accuracy truths time the step on one cached batch as ``truth.measure`` does: the mean
step of a ``fit`` over a cached batch, from step ``SKIP_STEPS`` on (slow steps included).
tfres's step alone is a figure of direct calls of ``model.train_function`` on an iterator
over one batch (their lower quartile until session 25, their mean since). This probe times
both on the same model, in rounds, to show how far apart the two ways are with no input
pipeline at all (no tfres here):

    .venv/bin/python benchmarks/accuracy/cached_step_gap.py --rounds 3
"""

import argparse
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS


class _Clock(keras.callbacks.Callback):
    async_safe = True

    def __init__(self):
        super().__init__()
        self.starts = []

    def on_train_batch_begin(self, batch, logs=None):
        self.starts.append(time.perf_counter())

    def on_train_end(self, logs=None):
        self.starts.append(time.perf_counter())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.random((256, 512), dtype="float32")
    y = rng.random((256, 1), dtype="float32")
    model = keras.Sequential(
        [
            keras.Input((512,)),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile("adam", "mse")
    cached = tf.data.Dataset.from_tensors((x, y)).repeat()
    for round_ in range(args.rounds):
        clock = _Clock()
        model.fit(cached, steps_per_epoch=args.steps, epochs=1, verbose=0, callbacks=[clock])
        steps = np.diff(clock.starts)[SKIP_STEPS:]
        fit_mean = (clock.starts[-1] - clock.starts[SKIP_STEPS]) / len(steps)
        iterator = iter(cached)
        function = model.train_function
        function(iterator)  # warm-up
        calls = []
        for _ in range(args.calls):
            start = time.perf_counter()
            logs = function(iterator)
            tf.nest.flatten(logs)[0].numpy()  # wait for the step
            calls.append(time.perf_counter() - start)
        ordered = sorted(calls)
        print(
            f"round {round_}: fit steps mean {1e3 * fit_mean:.2f} ms, median "
            f"{1e3 * statistics.median(steps):.2f} | direct calls lower quartile "
            f"{1e3 * ordered[(len(ordered) - 1) // 4]:.2f}, median "
            f"{1e3 * statistics.median(calls):.2f}, mean {1e3 * statistics.fmean(calls):.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
