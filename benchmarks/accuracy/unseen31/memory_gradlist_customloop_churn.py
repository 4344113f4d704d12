"""Telecom churn model: custom loop that keeps every step's gradients in a Python list for later analysis (a leak)."""
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

BATCH, STEPS, FEAT = 512, 85, 256


def build():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(2048, activation="relu"),
                          keras.layers.Dense(2048, activation="relu"), keras.layers.Dense(1)])
    return m, keras.optimizers.Adam(1e-4)


def run(get_batch):
    model, opt = build()
    lossf = keras.losses.BinaryCrossentropy(from_logits=True)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads
    grad_history = []  # "for gradient-norm diagnostics later" -- keeps ~20 MB per step alive
    stamps = []
    for i in range(STEPS):
        x, y = get_batch(i)
        loss, grads = step(x, y)
        float(loss); stamps.append(time.perf_counter())
        grad_history.append([g.numpy() for g in grads])
    norms = [float(np.sqrt(sum((g ** 2).sum() for g in gs))) for gs in grad_history[-3:]]
    return sec_per_step(stamps), norms


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(BATCH * 8, FEAT)).astype(np.float32); Y = (rng.random((BATCH * 8, 1)) < 0.2).astype(np.float32)
    t0 = time.perf_counter()
    full, norms = run(lambda i: (X[(i % 8) * BATCH:(i % 8 + 1) * BATCH], Y[(i % 8) * BATCH:(i % 8 + 1) * BATCH]))
    report("steps_per_second", 1.0 / full)
    msg = f"churn: {1/full:.2f} steps/s, last grad norms {norms[-1]:.3f}, wall {time.perf_counter()-t0:.1f}s"
    if a.truth:
        x, y = X[:BATCH], Y[:BATCH]
        comp, _ = run(lambda i: (x, y)); F = min(max((full - comp) / full, 0.0), 1.0)
        report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
