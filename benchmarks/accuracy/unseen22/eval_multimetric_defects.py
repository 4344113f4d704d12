"""Steel-surface defect detection: custom training loop, full test-set evaluation every epoch."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--steps-per-epoch", type=int, default=20)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()

SIZE = 48
NUM_TRAIN = 2048
NUM_TEST = 6000
EPOCHS = args.epochs
STEPS = args.steps_per_epoch
BATCH = args.batch_size

rng = np.random.default_rng(23)


def make_images(n):
    imgs = rng.normal(0.5, 0.1, (n, SIZE, SIZE, 1)).astype(np.float32)
    y = (rng.random(n) < 0.3).astype(np.float32)
    for i in np.where(y > 0)[0]:
        r, c = rng.integers(4, SIZE - 12, 2)
        imgs[i, r : r + 8, c : c + 3] += 0.4
    return imgs, y


x_train, y_train = make_images(NUM_TRAIN)
x_test, y_test = make_images(NUM_TEST)
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(NUM_TRAIN).repeat()
train_ds = train_ds.batch(BATCH).prefetch(2)


def build_model():
    inp = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        loss="binary_crossentropy",
        metrics=[
            keras.metrics.BinaryAccuracy(),
            keras.metrics.AUC(name="auc"),
            keras.metrics.AUC(curve="PR", name="pr_auc"),
            keras.metrics.Precision(),
            keras.metrics.Recall(),
        ],
    )
    return model


def train(data, evaluate):
    keras.utils.set_random_seed(12)
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[:, None], model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    durations = []
    train_time = eval_time = 0.0
    it = iter(data)
    first_step_end = None
    for epoch in range(EPOCHS):
        last = time.perf_counter()
        for _ in range(STEPS):
            x, y = next(it)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            durations.append(now - last)
            if first_step_end is None:
                first_step_end = now
            else:
                train_time += now - last
            last = now
        if evaluate:
            t = time.perf_counter()
            res = model.evaluate(x_test, y_test, batch_size=32, verbose=0, return_dict=True)
            eval_time += time.perf_counter() - t
            print(
                f"epoch {epoch}: loss={loss:.4f} "
                + " ".join(f"{k}={v:.3f}" for k, v in res.items())
            )
    return float(np.mean(durations[5:])), train_time, eval_time


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full, train_time, eval_time = train(train_ds, evaluate=True)
append_out({"steps_per_second": 1.0 / full})
share = eval_time / (train_time + eval_time)
msg = (
    f"defects: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), "
    f"train {train_time:.1f}s eval {eval_time:.1f}s (eval share {share:.2f})"
)
if args.truth:
    batch = next(iter(train_ds))
    compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), evaluate=False)
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
