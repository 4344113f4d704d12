import time; T0 = time.perf_counter()
"""Showroom footfall forecaster whose callback keeps a weight ledger in RAM.

Door-counter and zone-sensor counts for 40 furniture showrooms (hourly, four
weeks of history) predict next-day hourly footfall.  For a planned
"stochastic weight averaging" analysis the training script copies every
layer's weights to host memory after every batch and keeps the copies in a
Python list that is never trimmed.
Bottleneck: host memory grows through the run (memory-bound).
"""
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

HIST = 24 * 28
ZONES = 4
N = 6000
BATCH = 384
STEPS = 60
EPOCHS = 4


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class WeightLedger(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ledger = []

    def on_train_batch_end(self, batch, logs=None):
        self.ledger.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
        mb = sum(w.nbytes for snap in self.ledger for w in snap) / 1024 ** 2
        print(f"  epoch {epoch}: ledger {len(self.ledger)} snapshots {mb:.0f} MiB, peak RSS {rss:.2f} GiB")


def footfall(seed=86):
    rng = np.random.default_rng(seed)
    h = np.arange(HIST + 24)
    daily = np.clip(np.sin((h % 24 - 9) / 12 * np.pi), 0, None)
    weekly = 1 + 0.6 * ((h // 24) % 7 >= 5)
    x = np.zeros((N, HIST, ZONES), np.float32)
    y = np.zeros((N, 24), np.float32)
    for i in range(N):
        scale = rng.uniform(20, 200)
        counts = rng.poisson(scale * daily * weekly * rng.uniform(0.8, 1.2)).astype(np.float32) / 100.0
        for z in range(ZONES):
            x[i, :, z] = counts[:HIST] * rng.uniform(0.2, 1.0)
        y[i] = counts[HIST:]
    return x, y


def build_model():
    inp = keras.Input((HIST, ZONES))
    x = keras.layers.Conv1D(32, 24, strides=12, activation="relu")(inp)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(24)(x))
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(ds):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    ledger = WeightLedger()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, ledger], verbose=0)
    return timer.seconds_per_step(), model.count_params()


def main():
    x, y = footfall()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=86).repeat().batch(BATCH).prefetch(2)
    full, params = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[footfall] {params} params, full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        compute, _ = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(msg + f" peak RSS {rss:.2f} GiB wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
