"""Seismic event classifier: a multiprocessing.Pool synthesizes and featurizes each batch (spectrogram), custom loop."""
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
import multiprocessing as mp

BATCH, STEPS, WAVE = 32, 1500, 8192


def make_batch(seed):
    rng = np.random.default_rng(seed)
    t = np.arange(WAVE) / 100.0
    xs, ys = [], []
    for i in range(BATCH):
        y = int(rng.integers(0, 4))
        w = np.sin(2 * np.pi * (1 + y) * t) * np.exp(-t / 20) + rng.normal(0, 0.5, WAVE)
        frames = np.lib.stride_tricks.sliding_window_view(w, 256)[::64] * np.hanning(256)
        spec = np.log1p(np.abs(np.fft.rfft(frames, axis=1)))[:, :64]
        xs.append(spec.astype(np.float32)); ys.append(y)
    return np.stack(xs), np.asarray(ys, np.int32)


def build():
    m = keras.Sequential([keras.Input((125, 64)), keras.layers.Conv1D(32, 5, activation="relu"),
                          keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(4)])
    return m, keras.optimizers.Adam(1e-3)


def run(batch_iter):
    model, opt = build()
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    stamps = []
    for _, (x, y) in zip(range(STEPS), batch_iter):
        float(step(x, y)); stamps.append(time.perf_counter())
    return sec_per_step(stamps)


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(2) as pool:
        full = run(pool.imap(make_batch, range(STEPS)))
    report("steps_per_second", 1.0 / full)
    msg = f"seismic: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
    if a.truth:
        b = make_batch(0)
        def same():
            while True:
                yield b
        comp = run(same()); F = min(max((full - comp) / full, 0.0), 1.0)
        report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
