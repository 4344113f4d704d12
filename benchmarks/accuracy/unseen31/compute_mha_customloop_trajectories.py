"""Vessel trajectory forecasting: multi-head self-attention encoder, custom training loop on in-memory tensors."""
import argparse, json, os, shutil, sys, tempfile, time
import numpy as np
import tensorflow as tf
import keras


def sec_per_step(stamps):
    gaps = np.diff(np.asarray(stamps))
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")

BATCH, STEPS, T, D = 32, 60, 256, 128


def build():
    inp = keras.Input((T, 6)); h = keras.layers.Dense(D)(inp)
    for _ in range(3):
        a = keras.layers.MultiHeadAttention(8, D // 8)(h, h); h = keras.layers.LayerNormalization()(h + a)
        f = keras.layers.Dense(4 * D, activation="gelu")(h); h = keras.layers.LayerNormalization()(h + keras.layers.Dense(D)(f))
    return keras.Model(inp, keras.layers.Dense(2)(h)), keras.optimizers.Adam(1e-4)


def run(get_batch):
    model, opt = build()
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    stamps = []
    for i in range(STEPS):
        x, y = get_batch(i)
        float(step(x, y)); stamps.append(time.perf_counter())
    return sec_per_step(stamps)


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    rng = np.random.default_rng(0)
    X = tf.constant(rng.normal(size=(BATCH * 8, T, 6)).astype(np.float32)); Y = tf.constant(rng.normal(size=(BATCH * 8, T, 2)).astype(np.float32))
    t0 = time.perf_counter()
    full = run(lambda i: (X[(i % 8) * BATCH:(i % 8 + 1) * BATCH], Y[(i % 8) * BATCH:(i % 8 + 1) * BATCH])); report("steps_per_second", 1.0 / full)
    msg = f"trajectories: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
    if a.truth:
        x, y = X[:BATCH], Y[:BATCH]
        comp = run(lambda i: (x, y)); F = min(max((full - comp) / full, 0.0), 1.0)
        report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
