"""Diabetic-retinopathy referral model (fundus thumbnails) trained with a
custom loop.

After every short training epoch the loop runs a full validation pass over a
large held-out tf.data set and computes AUC, precision, recall, accuracy and
a calibration error, as the clinical team asked for per-epoch reports.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

EDGE = 32
N_TRAIN = 2048
N_VAL = 6144
BATCH = 32
VAL_BATCH = 128
STEPS = 15
EPOCHS = 6


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def synth(rng, n):
    y = (rng.random(n) < 0.3).astype(np.float32)
    x = rng.integers(0, 255, size=(n, EDGE, EDGE, 3), dtype=np.uint8)
    x[y == 1, 10:16, 10:16, 0] = 250
    return x, y[:, None]


def preprocess(x, y):
    x = tf.image.convert_image_dtype(x, tf.float32)
    return tf.image.per_image_standardization(x), y


def build_model():
    inp = keras.Input((EDGE, EDGE, 3))
    x = inp
    for f in (16, 32, 48):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(1)(x))


def run(train_batches, val_ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    metrics = [keras.metrics.AUC(name="auc"), keras.metrics.Precision(name="precision"),
               keras.metrics.Recall(name="recall"), keras.metrics.BinaryAccuracy(name="acc")]

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def predict_step(x):
        return tf.sigmoid(model(x, training=False))

    gaps, t_train, t_eval = [], 0.0, 0.0
    report = {}
    for epoch in range(EPOCHS):
        last = None
        t0 = time.perf_counter()
        for _ in range(STEPS):
            x, y = next(train_batches)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
        t1 = time.perf_counter()
        for m in metrics:
            m.reset_state()
        probs, labels = [], []
        for x, y in val_ds:
            p = predict_step(x)
            for m in metrics:
                m.update_state(y, p)
            probs.append(p.numpy())
            labels.append(y.numpy())
        probs, labels = np.concatenate(probs)[:, 0], np.concatenate(labels)[:, 0]
        bins = np.clip((probs * 10).astype(int), 0, 9)
        ece = sum(abs(probs[bins == b].mean() - labels[bins == b].mean()) * (bins == b).mean()
                  for b in range(10) if (bins == b).any())
        report = {m.name: float(m.result()) for m in metrics}
        report["ece"] = float(ece)
        t_train += t1 - t0
        t_eval += time.perf_counter() - t1
    return seconds_per_step(gaps), t_train, t_eval, loss, report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    xt, yt = synth(rng, N_TRAIN)
    xv, yv = synth(rng, N_VAL)
    train_ds = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=1).repeat()
    train_ds = train_ds.map(preprocess).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    val_ds = tf.data.Dataset.from_tensor_slices((xv, yv)).map(preprocess).batch(VAL_BATCH)
    full, t_train, t_eval, loss, report = run(iter(train_ds), val_ds)
    emit({"steps_per_second": 1.0 / full})
    msg = (f"retinopathy: {1.0 / full:.2f} steps/s, train {t_train:.1f}s, eval {t_eval:.1f}s "
           f"({100 * t_eval / (t_train + t_eval):.0f}% eval), auc {report['auc']:.3f}")
    if args.truth:
        one = next(iter(train_ds))

        def same_batch():
            while True:
                yield one

        compute, _, _, _, _ = run(same_batch(), val_ds)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
    print(msg)


if __name__ == "__main__":
    main()
