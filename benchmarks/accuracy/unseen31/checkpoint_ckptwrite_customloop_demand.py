"""Grocery demand forecaster: custom loop writing a tf.train.Checkpoint every few steps."""
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

BATCH, STEPS, EVERY, FEAT = 64, 80, 1, 128


def build():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(2048, activation="relu"),
                          keras.layers.Dense(2048, activation="relu"), keras.layers.Dense(2048, activation="relu"), keras.layers.Dense(1)])
    return m, keras.optimizers.Adam(1e-4)


def run(get_batch, ckdir):
    model, opt = build()
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    stamps, starts = [], []
    for i in range(STEPS):
        x, y = get_batch(i)
        starts.append(time.perf_counter())
        float(step(x, y)); stamps.append(time.perf_counter())
        if i % EVERY == EVERY - 1:
            ckpt.write(os.path.join(ckdir, "demand"))
    # training step only: time from batch start to loss fetched, from step 5 on
    return float(np.mean((np.asarray(stamps) - np.asarray(starts))[5:]))


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u31_checkpoint_ckptwrite_customloop_demand_")
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(BATCH * 8, FEAT)).astype(np.float32); Y = rng.normal(size=(BATCH * 8, 1)).astype(np.float32)
        t0 = time.perf_counter()
        full = run(lambda i: (X[(i % 8) * BATCH:(i % 8 + 1) * BATCH], Y[(i % 8) * BATCH:(i % 8 + 1) * BATCH]), tmp)
        report("steps_per_second", 1.0 / full)
        msg = f"demand: {1/full:.2f} steps/s (train step only), wall {time.perf_counter()-t0:.1f}s"
        if a.truth:
            x, y = X[:BATCH], Y[:BATCH]
            comp = run(lambda i: (x, y), tmp); F = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
