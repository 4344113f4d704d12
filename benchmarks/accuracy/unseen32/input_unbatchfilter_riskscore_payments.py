import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Card payments: batched raw transaction blocks are unbatched, filtered per transaction
# with an expensive risk-score predicate (small matrix algebra per row), then re-batched.
BATCH, STEPS, EPOCHS, FEAT = 128, 350, 3, 64


def make_data(rng, n=200_000):
    x = rng.standard_normal((n, FEAT)).astype(np.float32)
    y = (x[:, :4].sum(axis=1) > 0.5).astype(np.float32)
    return x, y


PROJ = tf.constant(np.random.default_rng(7).standard_normal((8, 8)).astype(np.float32))


def risky(x, y):
    # Reshape the row to an 8x8 "merchant-by-hour" grid; keep rows whose spectral risk is high enough.
    g = tf.reshape(x, (8, 8))
    c = tf.matmul(g, g, transpose_b=True) + tf.eye(8)
    p = tf.matmul(tf.matmul(PROJ, c), PROJ, transpose_b=True)
    ev = tf.linalg.eigvalsh(p + tf.transpose(p))
    score = ev[-1] / (tf.reduce_sum(ev) + 1e-3)
    return score > 0.2


def build_model():
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(512, activation="relu")(inp)
    h = keras.layers.Dense(128, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h))
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    x, y = make_data(rng)
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).batch(512).repeat()
          .unbatch().filter(risky).batch(BATCH, drop_remainder=True).prefetch(2))
    t0 = time.perf_counter()
    timer = StepTimer()
    build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        timer2 = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                          epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"input_unbatchfilter_riskscore_payments: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
