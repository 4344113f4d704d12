"""Trading card grading: centering / corner / surface crops -> PSA-style grade.

Card scans are synthesised once and stacked into a list of pre-built
tensors; a custom @tf.function GradientTape loop iterates over them for
several epochs. Compute-bound.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 32
N_BATCHES = 25
EPOCHS = 3
H, W = 56, 40
GRADES = 10  # PSA 1..10


def synth_cards(n, seed):
    rng = np.random.default_rng(seed)
    grade = rng.integers(0, GRADES, size=n)
    off = (GRADES - grade) * rng.uniform(-0.4, 0.4, size=n)  # centering shift in px
    yy = np.arange(H, dtype=np.float32)[None, :, None]
    xx = np.arange(W, dtype=np.float32)[None, None, :]
    border = 4 + off[:, None, None]
    inner = ((xx > border) & (xx < W - 8 + border) & (yy > 4) & (yy < H - 4)).astype(np.float32)
    photo = rng.uniform(0.2, 0.8, size=(n, 1, 1)) + 0.1 * np.sin(0.3 * xx + 0.2 * yy)
    wear = (GRADES - grade)[:, None, None] / GRADES
    corners = (((yy < 3) | (yy > H - 4)) & ((xx < 3) | (xx > W - 4))) * wear
    scratches = (rng.random((n, H, W)) < 0.02 * wear) * 0.5
    gray = inner * photo + (1 - inner) * 0.95 - corners + scratches
    gloss = gray * rng.uniform(0.9, 1.1, size=(n, 1, 1))
    img = np.stack([gray, gloss, inner], axis=-1) + rng.normal(0, 0.02, size=(n, H, W, 3))
    return img.astype(np.float32), grade.astype(np.int32)


def build_model():
    inp = keras.Input((H, W, 3))
    x = layers.Conv2D(48, 3, padding="same", activation="relu")(inp)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(192, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(GRADES)(x)
    return keras.Model(inp, out)


def train(batches):
    keras.utils.set_random_seed(8)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss_value = float("nan")
    for epoch in range(EPOCHS):
        for xb, yb in batches:
            loss_value = float(train_step(xb, yb))
            stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss_value


def main():
    x, y = synth_cards(BATCH * N_BATCHES, 1952)
    batches = [(tf.constant(x[i:i + BATCH]), tf.constant(y[i:i + BATCH]))
               for i in range(0, len(x), BATCH)]
    full, loss = train(batches)
    emit({"steps_per_second": 1.0 / full})
    print(f"[tradingcards] normal run: {full * 1000:.1f} ms/step, final loss {loss:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = batches[0]
        compute, _ = train([one] * len(batches))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[tradingcards] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
