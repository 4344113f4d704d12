"""Semiconductor wafer-map anomaly detection with a convolutional
autoencoder, trained with model.fit and steps_per_execution.

Wafer maps are generated once into memory and fed through a cached,
prefetched tf.data pipeline, so the encoder/decoder convolutions dominate.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WAFERS = 2048
EDGE = 64
BATCH = 16
SPE = 4             # steps_per_execution
STEPS = 96          # per epoch, a multiple of SPE
EPOCHS = 2


class StepClock(keras.callbacks.Callback):
    """Records batch-end times; with steps_per_execution > 1 Keras calls the
    hook once per execution, so each gap is divided by the steps it covers."""

    def __init__(self):
        super().__init__()
        self.gaps, self._last, self._last_batch = [], None, None

    def on_epoch_begin(self, epoch, logs=None):
        self._last, self._last_batch = None, None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            n = max(batch - self._last_batch, 1)
            self.gaps.extend([(now - self._last) / n] * n)
        self._last, self._last_batch = now, batch


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def synth(rng):
    yy, xx = np.mgrid[-1:1:EDGE * 1j, -1:1:EDGE * 1j]
    disk = (xx ** 2 + yy ** 2 <= 1.0).astype(np.float32)
    maps = (rng.random((N_WAFERS, EDGE, EDGE)) < 0.05).astype(np.float32)
    for i in range(0, N_WAFERS, 3):     # ring / scratch defect patterns
        r = rng.uniform(0.5, 0.9)
        maps[i] += (np.abs(np.sqrt(xx ** 2 + yy ** 2) - r) < 0.05)
    return (np.clip(maps, 0, 1) * disk)[..., None].astype(np.float32)


def build_model():
    inp = keras.Input((EDGE, EDGE, 1))
    x = inp
    for f in (16, 32, 64):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(f, 3, strides=2, padding="same", activation="relu")(x)
    for f in (64, 32, 16):
        x = keras.layers.Conv2DTranspose(f, 3, strides=2, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    out = keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", steps_per_execution=SPE)
    return model


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.gaps), time.perf_counter() - t0, hist.history["loss"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    maps = synth(np.random.default_rng(0))
    ds = tf.data.Dataset.from_tensor_slices((maps, maps)).cache().shuffle(N_WAFERS, seed=1).repeat()
    ds = ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
    full, wall, loss = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"wafermap: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {loss:.4f}"
    if args.truth:
        one = (maps[:BATCH], maps[:BATCH])
        compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
    print(msg)


if __name__ == "__main__":
    main()
