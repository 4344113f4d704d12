"""Hospitality: forecast next-week hotel occupancy from a year of daily
booking-curve features.

Data path: a Python generator (tf.data.Dataset.from_generator -> prefetch ->
model.fit) synthesises, per batch, one year of daily float64 booking curves
(64 hotels x 365 days x 48 lead-time buckets), reduces them to 24 features
and yields float32. For "drift diagnostics" the generator appends the raw
float64 block and the yielded batch to a history list that is never
trimmed, so resident memory grows by ~11 MB every step.
Bottleneck: memory growth from the unbounded history (the model is small).
"""
import time
WALL0 = time.perf_counter()
import json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, DAYS, LEADS = 64, 80, 2, 365, 48


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


HISTORY = []  # drift-diagnostics history: grows every batch, never trimmed


def gen():
    rng = np.random.default_rng(59)
    season = np.sin(np.arange(DAYS) / DAYS * 2 * np.pi)[None, :, None]
    while True:
        raw = rng.random((BATCH, DAYS, LEADS)) * 0.5 + 0.3 + 0.2 * season  # float64 booking curves
        x = np.concatenate([raw[:, :, ::4], raw[:, :, :12].cumsum(axis=2) / 12.0], axis=2).astype(np.float32)
        y = raw[:, -7:, 0].mean(axis=1, keepdims=True).astype(np.float32)
        HISTORY.append((raw, x))
        yield x, y


def make_ds():
    sig = (tf.TensorSpec((BATCH, DAYS, 24), tf.float32), tf.TensorSpec((BATCH, 1), tf.float32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).prefetch(1)


class MemLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("  epoch %d: RSS %.0f MiB, history %d batches" % (epoch, rss_mib(), len(HISTORY)))


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((DAYS, 24)), keras.layers.Conv1D(32, 7, strides=4, activation="relu"),
                          keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    timer = StepTimer()
    build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, MemLog()], verbose=0)
    return timer.sec_per_step()


def main():
    full = run(make_ds())
    emit({"steps_per_second": 1.0 / full})
    print("memory_replay_history_hotel_occupancy: %.4f s/step, RSS %.0f MiB, history %d batches, wall %.1f s"
          % (full, rss_mib(), len(HISTORY), time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
