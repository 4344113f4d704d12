import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


# Kite flight telemetry: the logger on the kite line writes one CSV line per
# 12-second window (altitude, line tension, apparent wind, bridle angle at
# 25 Hz).  tf.data maps a tf.numpy_function over each line (serial, no
# parallel calls) that parses the text and computes gust/stall features;
# the label is whether the kite stalled in the next window.
WINDOW = 96
FEATS = 4
N_LINES = 6000
BATCH = 64
STEPS = 150
EPOCHS = 3


def make_lines(seed):
    rng = np.random.default_rng(seed)
    lines, labels = [], []
    t = np.arange(WINDOW) / 25.0
    for _ in range(N_LINES):
        wind = 6 + rng.gamma(2.0, 1.5) + rng.normal(0, 1.2, WINDOW).cumsum() * 0.1
        alt = 30 + 8 * np.sin(0.4 * t + rng.uniform(0, 6)) + wind * 0.5
        tension = 0.5 * wind ** 2 + rng.normal(0, 2, WINDOW)
        angle = 20 + rng.normal(0, 3, WINDOW)
        vals = np.stack([alt, tension, wind, angle], axis=1).ravel()
        lines.append(",".join(f"{v:.3f}" for v in vals))
        labels.append(float(wind.min() < 5.0))
    return lines, np.asarray(labels, dtype=np.float32)


def parse_window(line):
    vals = np.array([float(tok) for tok in line.decode().split(",")], dtype=np.float32)
    w = vals.reshape(WINDOW, FEATS)
    mu = w.mean(axis=0)
    sd = w.std(axis=0) + 1e-3
    z = (w - mu) / sd
    gust = np.zeros((WINDOW, 1), dtype=np.float32)
    run_max = -1e9
    for i, v in enumerate(w[:, 2].tolist()):
        run_max = max(run_max * 0.97, v)
        gust[i, 0] = run_max - v
    return np.concatenate([z, gust], axis=1).astype(np.float32)


def to_features(line, label):
    x = tf.numpy_function(parse_window, [line], tf.float32)
    x.set_shape((WINDOW, FEATS + 1))
    return x, label


def make_model():
    inp = keras.Input((WINDOW, FEATS + 1))
    x = keras.layers.Conv1D(64, 5, activation="relu", padding="same")(inp)
    x = keras.layers.Conv1D(64, 5, activation="relu", padding="same")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def run(ds):
    keras.utils.set_random_seed(13)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    lines, labels = make_lines(21)
    ds = (tf.data.Dataset.from_tensor_slices((lines, labels))
          .shuffle(2048, seed=1)
          .map(to_features)
          .batch(BATCH)
          .repeat())
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"kiteflights: {full * 1000:.1f} ms/step, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"kiteflights truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
