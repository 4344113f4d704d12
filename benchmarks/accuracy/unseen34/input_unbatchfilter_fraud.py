"""Card-fraud scorer trained on screened transaction histories.

Transactions arrive in per-merchant chunks.  The pipeline unbatches the
chunks into single transactions, drops the ones that fail a data-quality
screen (a predicate that rebuilds the customer's recent-spend matrix and
checks its conditioning and a Mahalanobis-style outlier score), and re-batches
what survives with .unbatch().filter().batch().
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

CHUNKS = 256
CHUNK = 128
FEATS = 40
HIST = 48
CH = 24
BATCH = 128
STEPS = 400
EPOCHS = 2


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def synth_chunks(rng):
    feats = rng.normal(0, 1, size=(CHUNKS, CHUNK, FEATS)).astype(np.float32)
    hist = rng.gamma(2.0, 30.0, size=(CHUNKS, CHUNK, HIST, CH)).astype(np.float32)
    logits = feats[..., 0] * 1.5 + feats[..., 3] - 2.0
    labels = (rng.random((CHUNKS, CHUNK)) < 1 / (1 + np.exp(-logits))).astype(np.float32)
    return feats, hist, labels


def passes_screen(feats, hist, label):
    centred = hist - tf.reduce_mean(hist, axis=0, keepdims=True)
    cov = tf.matmul(centred, centred, transpose_a=True) / HIST + 1e-3 * tf.eye(CH)
    eig = tf.linalg.eigvalsh(cov)
    cond_ok = eig[-1] / eig[0] < 1e4
    last = centred[-1:]
    maha = tf.matmul(tf.matmul(last, tf.linalg.inv(cov)), last, transpose_b=True)[0, 0]
    return tf.logical_and(cond_ok, maha < 60.0)


def make_dataset(seed):
    feats, hist, labels = synth_chunks(np.random.default_rng(seed))
    ds = tf.data.Dataset.from_tensor_slices((feats, hist, labels)).shuffle(CHUNKS, seed=seed).repeat()
    ds = ds.unbatch().filter(passes_screen)
    ds = ds.map(lambda f, h, y: (tf.concat([f, tf.math.log1p(tf.reduce_mean(h, axis=0))], 0), y))
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((FEATS + CH,))
    x = inp
    for units in (512, 512, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
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
    full, wall, loss = train(make_dataset(6))
    emit({"steps_per_second": 1.0 / full})
    msg = f"fraud: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {loss:.4f}"
    if args.truth:
        one = next(iter(make_dataset(9)))
        compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
    print(msg)


if __name__ == "__main__":
    main()
