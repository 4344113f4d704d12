"""RF spectrum occupancy / interference classification for a telecom
spectrum-monitoring network, compute bound.

Data path: in-memory IQ-derived power spectral density sweeps (2 channels x
1024 frequency bins) generated with numpy, converted once to tf tensors;
a Python loop slices batch b of the resident tensors and calls a
tf.function GradientTape step of a dilated 1-D convolution stack.
Deliberate bottleneck: model compute; batching is a tensor slice.
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

BATCH = 16
STEPS = 100
BINS = 512
CLASSES = 6
NBATCH = 16


def make_data(rng):
    n = BATCH * NBATCH
    f = np.linspace(0, 1, BINS, dtype=np.float32)
    y = rng.integers(0, CLASSES, size=n)
    x = rng.normal(scale=0.3, size=(n, BINS, 2)).astype(np.float32)
    for i in range(n):
        c = 0.1 + 0.13 * y[i]
        x[i, :, 0] += np.exp(-((f - c) ** 2) / 0.0005)
        x[i, :, 1] += np.cos(40 * f * (1 + y[i]))
    return tf.constant(x), tf.constant(y.astype(np.int32))


def build_model():
    inp = keras.Input((BINS, 2))
    x = keras.layers.Conv1D(48, 7, padding="same", activation="relu")(inp)
    for d in (1, 2, 4, 8, 16, 32):
        h = keras.layers.Conv1D(48, 3, padding="same", dilation_rate=d, activation="relu")(x)
        x = keras.layers.Add()([x, h])
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inp, out)


def run(batches):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    X, Y = make_data(np.random.default_rng(62))

    def resident(step):
        b = step % NBATCH
        return X[b * BATCH:(b + 1) * BATCH], Y[b * BATCH:(b + 1) * BATCH]

    full, loss = run(resident)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"compute_dilatedconv_tapeloop_rfspectrum: {sps:.2f} steps/s ({full*1000:.1f} ms/step, loss {loss:.3f})"
    if args.truth:
        fixed = resident(0)
        compute, _ = run(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
