"""Kelp forest monitoring: segment-free estimate of kelp canopy fraction from
multispectral satellite tiles (in-memory tf.data pipeline).

Cause: a batch callback writes a full .keras archive (architecture + weights + optimizer
state) every SAVE_EVERY batches, keeping a rolling set of the last three archives.
"""
import json, os, shutil, sys, tempfile, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, SAVE_EVERY = 8, 40, 2, 1
N_SITES, SITE_DIM = 400000, 64
TILE, BANDS = 32, 6


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class TimedArchiver(keras.callbacks.Callback):
    """Times steps and saves; the clock restarts after each save so gaps never contain one."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.gaps, self.last, self.save_seconds, self.n = folder, [], None, 0.0, 0
        os.makedirs(folder, exist_ok=True)

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
        if (batch + 1) % SAVE_EVERY == 0:
            path = os.path.join(self.folder, f"kelp_{self.n:04d}.keras")
            self.model.save(path)
            old = os.path.join(self.folder, f"kelp_{self.n - 3:04d}.keras")
            if os.path.exists(old):
                os.remove(old)
            self.n += 1
            self.last = time.perf_counter()
            self.save_seconds += self.last - t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def make_data(rng, n=2048):
    yy, xx = np.mgrid[0:TILE, 0:TILE] / TILE
    frac = rng.uniform(0, 0.6, n)
    x = rng.normal(0.05, 0.01, (n, TILE, TILE, BANDS))
    for i in range(n):
        mask = (np.sin(8 * xx + rng.uniform(0, 6)) * np.cos(6 * yy) + 1) / 2 < frac[i]
        x[i, mask, 3] += 0.25
        x[i, mask, 4] += 0.1
    return (x.astype(np.float32), rng.integers(0, N_SITES, n).astype(np.int32)), frac.astype(np.float32)


def make_model():
    tiles = keras.Input((TILE, TILE, BANDS))
    site = keras.Input((), dtype="int32")
    h = keras.layers.Flatten()(keras.layers.AveragePooling2D(4)(tiles))
    h = keras.layers.Dense(512, activation="relu")(h)
    # frozen per-site climatology embedding (400k coastal sites): saved in every archive
    e = keras.layers.Embedding(N_SITES, SITE_DIM, trainable=False)(site)
    h = keras.layers.Dense(256, activation="relu")(keras.layers.Concatenate()([h, e]))
    return keras.Model([tiles, site], keras.layers.Dense(1, activation="sigmoid")(h))


def train(ds, folder):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-4), "mse")
    cb = TimedArchiver(folder)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return cb


def main():
    tmp = tempfile.mkdtemp(prefix="u72_checkpoint_kerasarchive_batchcb_kelpcanopy_")
    try:
        x, y = make_data(np.random.default_rng(72))
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=1).repeat().batch(BATCH).prefetch(2)
        cb = train(ds, os.path.join(tmp, "run"))
        full = cb.sec_per_step()
        wall = time.perf_counter() - T0
        emit({"steps_per_second": 1.0 / full})
        line = (f"kelpcanopy: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), {cb.n} saves "
                f"{cb.save_seconds:.1f}s = {100 * cb.save_seconds / wall:.0f}% of wall {wall:.1f}s")
        if TRUTH:
            cb2 = train(tf.data.Dataset.from_tensors(((x[0][:BATCH], x[1][:BATCH]), y[:BATCH])).repeat(), os.path.join(tmp, "truth"))
            comp = cb2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
