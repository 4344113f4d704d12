"""Acoustic leak detection on water mains: hydrophone clips are turned into log-mel-like
spectrogram patches on the fly by a keras.utils.PyDataset; for a later "what did the
model see" audit, the dataset memoises every augmented batch it ever served in a dict
that is never cleared, so resident memory climbs steadily through model.fit.
"""
import json
import os
import resource
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 110
EPOCHS = 4
F, T = 96, 128


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class HydrophonePatches(keras.utils.PyDataset):
    def __init__(self, base, labels, **kw):
        super().__init__(**kw)
        self.base, self.labels = base, labels
        self.served = 0
        self.audit = {}  # (serve counter, index) -> batch actually shown to the model

    def __len__(self):
        return STEPS

    def __getitem__(self, i):
        rng = np.random.default_rng(self.served)
        idx = rng.integers(0, len(self.base), BATCH)
        x = self.base[idx]
        shift = int(rng.integers(-8, 8))
        x = np.roll(x, shift, axis=2) * rng.uniform(0.8, 1.2, (BATCH, 1, 1, 1)).astype(np.float32)
        x = x + rng.normal(0, 0.05, x.shape).astype(np.float32)
        y = self.labels[idx]
        self.audit[(self.served, i)] = (x.copy(), y.copy())
        self.served += 1
        return x, y


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def build_model():
    inp = keras.Input((F, T, 1))
    x = keras.layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(48, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    rng = np.random.default_rng(51)
    n = 512
    labels = (rng.random(n) < 0.35).astype(np.float32)
    tt = np.linspace(0, 1, T, dtype=np.float32)
    base = rng.normal(0, 0.3, (n, F, T, 1)).astype(np.float32)
    base[labels == 1, 40:60, :, 0] += 0.8 * (1 + np.sin(40 * tt))[None, None, :]
    data = HydrophonePatches(base, labels)

    tf.random.set_seed(51)
    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    if "--truth" in sys.argv:
        xb, yb = data[0]
        tf.random.set_seed(51)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
    cached = sum(a.nbytes + b.nbytes for a, b in data.audit.values()) / 2**30
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"leak detector: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, final acc {hist.history['accuracy'][-1]:.3f}, "
          f"audit cache {len(data.audit)} batches {cached:.2f} GiB, peak rss {rss:.2f} GiB, "
          f"fit {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
