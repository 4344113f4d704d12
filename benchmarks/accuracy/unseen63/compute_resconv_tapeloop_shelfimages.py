"""Supermarket shelves: classify shelf-camera crops (facing vs. gap vs. misplaced).

Input path: synthetic 32x32 RGB crops are generated and pre-batched as
tf.constant tensors before training; a Python GradientTape loop indexes the
ready tensors, so no per-step Python preprocessing happens.
Deliberate bottleneck: compute - a residual conv net in a tf.function step.
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 32
STEPS = 80
N_BATCHES = 24
N_CLASSES = 6


def make_crops(seed=63):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for b in range(N_BATCHES):
        y = rng.integers(0, N_CLASSES, size=BATCH)
        x = rng.normal(0.5, 0.2, size=(BATCH, 32, 32, 3)).astype(np.float32)
        x[:, :, ::8, :] += (y[:, None, None, None] / N_CLASSES).astype(np.float32)
        xs.append(tf.constant(x)); ys.append(tf.constant(y.astype(np.int32)))
    return xs, ys


def res_block(x, f):
    s = keras.layers.Conv2D(f, 1)(x) if x.shape[-1] != f else x
    h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    h = keras.layers.Conv2D(f, 3, padding="same")(h)
    return keras.layers.Activation("relu")(h + s)


def build_model():
    inp = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = res_block(x, 16)
    x = keras.layers.MaxPooling2D()(x)
    x = res_block(x, 32)
    x = keras.layers.MaxPooling2D()(x)
    x = res_block(x, 48)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(N_CLASSES)(x))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def train(batch_fn, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    t = time.perf_counter()
    for i in range(STEPS):
        x, y = batch_fn(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    sps = float(np.mean(np.diff(stamps)[5:]))
    print(f"[{label}] {STEPS} steps in {time.perf_counter() - t:.1f}s, loss {loss:.4f}, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    xs, ys = make_crops()
    full = train(lambda i: (xs[i % N_BATCHES], ys[i % N_BATCHES]), "resconv")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        comp = train(lambda i: (xs[0], ys[0]), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
