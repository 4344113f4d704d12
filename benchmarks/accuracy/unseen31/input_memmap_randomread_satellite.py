"""Satellite tile land-cover model: random-access reads of a large np.memmap file in a generator-style custom loop."""
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

BATCH, STEPS, TILE, N = 64, 600, 64, 6000


def write_memmap(path):
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint16, shape=(N, TILE, TILE, 4))
    rng = np.random.default_rng(0)
    for s in range(0, N, 500):
        mm[s:s + 500] = rng.integers(0, 4096, (min(500, N - s), TILE, TILE, 4), dtype=np.uint16)
    mm.flush(); del mm
    return np.random.default_rng(1).integers(0, 5, N).astype(np.int32)


def reader(path, labels):
    rng = np.random.default_rng(2)
    while True:
        mm = np.load(path, mmap_mode="r")
        idx = rng.choice(N, BATCH, replace=False)
        tiles = []
        for i in idx:  # per-tile read, band-wise scaling and NDVI channel
            t = np.asarray(mm[i], dtype=np.float32) / 4096.0
            ndvi = (t[..., 3] - t[..., 0]) / (t[..., 3] + t[..., 0] + 1e-3)
            t = (t - t.mean(axis=(0, 1))) / (t.std(axis=(0, 1)) + 1e-6)
            tiles.append(np.concatenate([t, ndvi[..., None]], axis=-1))
        yield np.stack(tiles), labels[idx]


def build():
    m = keras.Sequential([keras.Input((TILE, TILE, 5)), keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(5)])
    return m, keras.optimizers.Adam(1e-3)


def run(get_batch):
    model, opt = build()
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    stamps = []
    for _ in range(STEPS):
        x, y = get_batch()
        float(step(x, y)); stamps.append(time.perf_counter())
    return sec_per_step(stamps)


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u31_input_memmap_randomread_satellite_")
    try:
        path = os.path.join(tmp, "tiles.npy"); labels = write_memmap(path)
        t0 = time.perf_counter()
        gen = reader(path, labels); full = run(lambda: next(gen)); report("steps_per_second", 1.0 / full)
        msg = f"satellite: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
        if a.truth:
            x, y = next(reader(path, labels))
            comp = run(lambda: (x, y)); F = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
