"""Seismic event classification from raw three-component traces.

Windows are cut from long synthetic station traces by a callable source class
(``TraceWindowSource.__call__``) that ``tf.data.Dataset.from_generator`` drives.
Each window is detrended, tapered and turned into a log-spectrogram in NumPy,
one frame at a time, before it reaches the model.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS_PER_EPOCH = 80
EPOCHS = 3
WIN = 2048
FRAME = 128
HOP = 32
N_FRAMES = (WIN - FRAME) // HOP + 1
N_BINS = FRAME // 2 + 1


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class TraceWindowSource:
    """Cuts labelled windows out of continuous station recordings."""

    def __init__(self, n_stations=8, trace_len=400_000, seed=0):
        rng = np.random.default_rng(seed)
        self.traces = rng.normal(0, 1, size=(n_stations, 3, trace_len)).astype(np.float32)
        t = np.arange(trace_len, dtype=np.float32)
        for s in range(n_stations):
            self.traces[s] += 0.3 * np.sin(2 * np.pi * (0.01 + 0.002 * s) * t)
        self.taper = np.hanning(FRAME).astype(np.float32)
        self.seed = seed

    def _spectrogram(self, x):
        x = x - np.linspace(x[0], x[-1], x.shape[0], dtype=np.float32)
        out = np.empty((N_FRAMES, N_BINS), dtype=np.float32)
        for i in range(N_FRAMES):
            seg = x[i * HOP:i * HOP + FRAME] * self.taper
            out[i] = np.log1p(np.abs(np.fft.rfft(seg)))
        return out

    def __call__(self):
        rng = np.random.default_rng(self.seed)
        n_st, _, n = self.traces.shape
        while True:
            s = rng.integers(n_st)
            start = rng.integers(0, n - WIN)
            label = int(rng.integers(4))
            window = self.traces[s, :, start:start + WIN].copy()
            if label:
                onset = rng.integers(WIN // 4, WIN // 2)
                window[:, onset:] += label * np.exp(-np.arange(WIN - onset) / 300.0)
            feats = np.stack([self._spectrogram(window[c]) for c in range(3)], axis=-1)
            yield feats, label


def build_model():
    inp = keras.Input((N_FRAMES, N_BINS, 3))
    x = keras.layers.Conv2D(32, 3, activation="relu")(inp)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(64, 3, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def make_dataset():
    source = TraceWindowSource()
    ds = tf.data.Dataset.from_generator(
        source,
        output_signature=(tf.TensorSpec((N_FRAMES, N_BINS, 3), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def train(ds):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    ds = make_dataset()
    full = train(ds)
    report("steps_per_second", 1.0 / full)
    msg = f"seismic: {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
