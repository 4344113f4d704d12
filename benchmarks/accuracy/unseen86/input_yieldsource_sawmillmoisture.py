import time; T0 = time.perf_counter()
"""Kiln-charge moisture classifier for a sawmill drying kiln.

Each sample is a window of six pin-type moisture sensors driven into a stack of
oak boards.  A Python generator simulates the raw probe voltages, despikes them
with a rolling median (pure Python), converts voltage to % moisture content with
a species correction table and yields (window, grade) pairs.  The generator is
wrapped in tf.data.Dataset.from_generator and fed to model.fit.
Bottleneck: the per-sample Python despiking inside the generator (input-bound).
"""
import os, sys, json, math
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

N_PROBES = 6
WIN = 160
MEDIAN_K = 5
BATCH = 32
STEPS = 130
EPOCHS = 3
GRADES = 4   # kiln-dry, shipping-dry, air-dry, green

SPECIES_CORR = {"red_oak": 0.92, "white_oak": 0.95, "maple": 1.03, "walnut": 0.98}


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


def despike(trace):
    out = []
    half = MEDIAN_K // 2
    n = len(trace)
    for i in range(n):
        lo, hi = max(0, i - half), min(n, i + half + 1)
        w = sorted(trace[lo:hi])
        out.append(w[len(w) // 2])
    return out


def probe_windows(seed=86):
    rng = np.random.default_rng(seed)
    species = list(SPECIES_CORR)
    while True:
        grade = int(rng.integers(GRADES))
        mc_target = [7.0, 12.0, 18.0, 28.0][grade] + rng.normal(0, 1.5)
        sp = species[int(rng.integers(len(species)))]
        t = np.linspace(0.0, 1.0, WIN)
        window = np.empty((WIN, N_PROBES), np.float32)
        for p in range(N_PROBES):
            drift = mc_target + rng.normal(0, 0.6) - 2.0 * t * rng.uniform(0, 1)
            volts = 0.08 * drift + rng.normal(0, 0.02, WIN)
            spikes = rng.random(WIN) < 0.03
            volts[spikes] += rng.normal(0, 0.5, spikes.sum())
            clean = despike(volts.tolist())
            mc = [SPECIES_CORR[sp] * v / 0.08 for v in clean]
            window[:, p] = mc
        window = (window - 15.0) / 8.0
        yield window, np.int32(grade)


def build_model():
    inp = keras.Input((WIN, N_PROBES))
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(GRADES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return m


def make_dataset():
    sig = (tf.TensorSpec((WIN, N_PROBES), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(probe_windows, output_signature=sig)
    return ds.batch(BATCH).prefetch(2)


def train(ds):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = train(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    msg = f"[sawmill] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = next(iter(make_dataset()))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
