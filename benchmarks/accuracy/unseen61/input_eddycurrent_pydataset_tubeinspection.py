"""Heat-exchanger tube inspection: flaw classifier fed by keras.utils.PyDataset.

Each probe pull is stored as packed little-endian int16 I/Q pairs for 4 frequencies.
__getitem__ decodes the bytes, and for every sample and every frequency rotates the
impedance plane to the calibration phase, removes drift with a per-channel linear fit and
builds magnitude/phase features in Python. That per-sample Python work is the bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 32
STEPS = 110
EPOCHS = 2
LEN = 256
FREQS = 4
POOL = 512


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


def make_pulls(rng):
    blobs, labels = [], []
    t = np.linspace(-1, 1, LEN)
    for i in range(POOL):
        flaw = i % 4
        sig = np.zeros((LEN, FREQS, 2))
        for f in range(FREQS):
            amp = 300 * (flaw + 1) / (f + 1)
            ph = 0.4 * flaw + 0.3 * f
            bump = amp * np.exp(-(t * (6 + 2 * flaw)) ** 2)
            sig[:, f, 0] = bump * np.cos(ph) + 50 * t + rng.normal(0, 20, LEN)
            sig[:, f, 1] = bump * np.sin(ph) - 30 * t + rng.normal(0, 20, LEN)
        blobs.append(np.clip(sig, -32000, 32000).astype("<i2").tobytes())
        labels.append(flaw)
    return blobs, np.array(labels, np.int32)


class TubePulls(keras.utils.PyDataset):
    def __init__(self, blobs, labels, steps, seed):
        super().__init__()
        self.blobs, self.labels, self.steps = blobs, labels, steps
        self.rng = np.random.default_rng(seed)
        self.cal = [0.1 * f for f in range(FREQS)]

    def __len__(self):
        return self.steps

    def decode(self, blob):
        raw = np.frombuffer(blob, dtype="<i2").astype(np.float32).reshape(LEN, FREQS, 2)
        idx = np.arange(LEN, dtype=np.float32)
        feats = []
        for f in range(FREQS):
            c, s = np.cos(self.cal[f]), np.sin(self.cal[f])
            x = raw[:, f, 0] * c - raw[:, f, 1] * s
            y = raw[:, f, 0] * s + raw[:, f, 1] * c
            for ch in (x, y):
                a, b = np.polyfit(idx, ch, 1)
                ch -= a * idx + b
            mag = np.hypot(x, y)
            ph = np.arctan2(y, x)
            feats.extend([x / 500.0, y / 500.0, mag / 500.0, ph / np.pi])
        return np.stack(feats, axis=-1)

    def __getitem__(self, i):
        ids = self.rng.integers(0, len(self.blobs), BATCH)
        xs = np.stack([self.decode(self.blobs[j]) for j in ids])
        shift = int(self.rng.integers(-8, 9))
        xs = np.roll(xs, shift, axis=1)
        return xs.astype(np.float32), self.labels[ids]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((LEN, FREQS * 4))
    x = keras.layers.Conv1D(48, 7, activation="relu", padding="same")(inp)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 5, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    blobs, labels = make_pulls(np.random.default_rng(SEED))
    data = TubePulls(blobs, labels, STEPS, SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "tubeinspection eddy-current PyDataset: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        bx, by = data[0]
        fixed = tf.data.Dataset.from_tensors((bx, by)).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
