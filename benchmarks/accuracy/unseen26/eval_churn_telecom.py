"""Telecom churn prediction: custom training loop with full test-set metrics each epoch."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TRAIN = 24576
N_TEST = 40000
N_FEATURES = 48
BATCH_SIZE = 256
EVAL_BATCH = 256
EPOCHS = 4
STEPS_PER_EPOCH = N_TRAIN // BATCH_SIZE

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(9)
w = rng.normal(size=N_FEATURES)


def make_split(n):
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    logits = x @ w / 4 + 0.5 * np.sin(x[:, 0] * x[:, 1])
    y = (rng.random(n) < 1 / (1 + np.exp(-logits))).astype(np.float32)
    return x, y[:, None]


x_train, y_train = make_split(N_TRAIN)
x_test, y_test = make_split(N_TEST)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .shuffle(N_TRAIN)
    .batch(BATCH_SIZE, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(EVAL_BATCH)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((N_FEATURES,))
    x = inp
    for units in (512, 512, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inp, out)


bce = keras.losses.BinaryCrossentropy()


def make_step(model, opt):
    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = bce(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step


def evaluate(model):
    metrics = [
        keras.metrics.AUC(name="auc"),
        keras.metrics.Precision(name="precision"),
        keras.metrics.Recall(name="recall"),
        keras.metrics.BinaryAccuracy(name="accuracy"),
        keras.metrics.BinaryCrossentropy(name="bce"),
    ]
    for x, y in test_ds:
        p = model(x, training=False)
        for m in metrics:
            m.update_state(y, p)
    return {m.name: float(m.result()) for m in metrics}


def run(batches_for_epoch, tag, do_eval):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    train_step = make_step(model, opt)
    step_times = []
    train_time = eval_time = 0.0
    for epoch in range(EPOCHS):
        t0 = last = time.perf_counter()
        for x, y in batches_for_epoch():
            loss = float(train_step(x, y))
            now = time.perf_counter()
            step_times.append(now - last)
            last = now
        train_time += time.perf_counter() - t0
        if do_eval:
            t1 = time.perf_counter()
            results = evaluate(model)
            eval_time += time.perf_counter() - t1
            print(
                f"[{tag}] epoch {epoch + 1} loss={loss:.4f} "
                + " ".join(f"{k}={v:.4f}" for k, v in results.items())
            )
    sps = float(np.mean(step_times[5:]))
    return sps, train_time, eval_time


full, train_time, eval_time = run(lambda: train_ds, "churn", do_eval=True)
write_out({"steps_per_second": 1.0 / full})
print(
    f"train time {train_time:.1f}s, eval time {eval_time:.1f}s "
    f"({eval_time / (train_time + eval_time):.0%} of the loop)"
)

if args.truth:
    xb, yb = next(iter(train_ds))
    cached = tf.data.Dataset.from_tensors((xb, yb)).repeat(STEPS_PER_EPOCH)
    compute, _, _ = run(lambda: cached, "cached", do_eval=True)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
