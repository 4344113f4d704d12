"""Terrain-type classification for a flight-simulator scenery generator.
Training tiles are synthesised on the fly: a keras.utils.PyDataset builds each 64x64 heightmap as
multi-octave fractal value noise (bilinear upsampling of random lattices in numpy), then derives
slope and hillshade channels; the tile's class is its roughness regime. model.fit reads the
PyDataset directly.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 32
STEPS = 60
EPOCHS = 4
SIZE = 64
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def upsample_bilinear(lat, size):
    n = lat.shape[0]
    c = np.linspace(0, n - 1.001, size)
    i0 = c.astype(np.int64)
    f = c - i0
    f = f * f * (3 - 2 * f)  # smoothstep
    rows = lat[i0] * (1 - f)[:, None] + lat[i0 + 1] * f[:, None]
    return rows[:, i0] * (1 - f)[None, :] + rows[:, i0 + 1] * f[None, :]


def terrain_tile(rng, cls):
    persistence = (0.35, 0.5, 0.65, 0.8)[cls]
    h = np.zeros((SIZE, SIZE))
    amp, cells = 1.0, 3
    for _ in range(6):
        lat = rng.random((cells + 1, cells + 1))
        h += amp * upsample_bilinear(lat, SIZE)
        amp *= persistence
        cells *= 2
    h = (h - h.min()) / (np.ptp(h) + 1e-6)
    gy, gx = np.gradient(h * 40)
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gx, gy)
    az, alt = np.radians(315), np.radians(45)
    shade = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - aspect)
    return np.stack([h, slope / (np.pi / 2), shade], -1).astype(np.float32)


class TerrainTiles(keras.utils.PyDataset):
    def __init__(self, seed, n_batches, **kw):
        super().__init__(**kw)
        self.seed, self.n = seed, n_batches

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        y = rng.integers(0, 4, BATCH)
        x = np.stack([terrain_tile(rng, int(c)) for c in y])
        return x, y.astype(np.int32)


def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(4, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_input_valuenoise_pydataset_terrain_")
    try:
        keras.utils.set_random_seed(SEED)
        tiles = TerrainTiles(SEED, STEPS)
        model = build_model()
        timer = StepTimer()
        hist = model.fit(tiles, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            xb, yb = TerrainTiles(SEED + 1, 1)[0]
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS,
                       callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("input_valuenoise_pydataset_terrain: acc %.3f, %s" % (hist.history["accuracy"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
