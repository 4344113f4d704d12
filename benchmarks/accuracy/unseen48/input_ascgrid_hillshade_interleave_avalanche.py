"""Avalanche terrain mapping: classify 32x32 DEM tiles as avalanche-prone release areas.
The script writes synthetic digital elevation models as ESRI ASCII grid (.asc) text files;
tf.data interleaves one from_generator pipeline per file, each of which parses the grid
header and rows in Python, derives slope, aspect and hillshade with numpy, and cuts
overlapping tiles for model.fit."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, GRID, TILE, STRIDE, BATCH, STEPS, EPOCHS, N_FILES = 48, 160, 32, 16, 32, 210, 3, 12


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_dems(folder):
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:GRID, 0:GRID].astype(np.float64)
    paths = []
    for k in range(N_FILES):
        z = np.zeros((GRID, GRID))
        for _ in range(6):
            cy, cx = rng.uniform(0, GRID, 2)
            z += rng.uniform(200, 900) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * rng.uniform(15, 45) ** 2))
        z += 1500 + rng.normal(0, 2, z.shape)
        p = os.path.join(folder, f"dem_{k:02d}.asc")
        with open(p, "w") as f:
            f.write(f"ncols {GRID}\nnrows {GRID}\nxllcorner {2600000 + k * 5000}\nyllcorner 1150000\ncellsize 10\nNODATA_value -9999\n")
            for row in z:
                f.write(" ".join(f"{v:.2f}" for v in row) + "\n")
        paths.append(p)
    return paths


def read_asc(path):
    header = {}
    with open(path) as f:
        for _ in range(6):
            key, val = f.readline().split()
            header[key.lower()] = float(val)
        rows = [[float(v) for v in line.split()] for line in f]
    z = np.array(rows, np.float64)
    z[z == header["nodata_value"]] = np.nan
    return z, header["cellsize"]


def terrain_tiles(path):
    path = path.decode() if isinstance(path, bytes) else path
    z, cell = read_asc(path)
    dzdy, dzdx = np.gradient(z, cell)
    slope = np.degrees(np.arctan(np.hypot(dzdx, dzdy)))
    aspect = np.degrees(np.arctan2(-dzdx, dzdy)) % 360
    az, alt = np.radians(315), np.radians(45)
    shade = np.sin(alt) * np.cos(np.radians(slope)) + np.cos(alt) * np.sin(np.radians(slope)) * np.cos(az - np.radians(aspect))
    curv = np.gradient(dzdx, cell, axis=1) + np.gradient(dzdy, cell, axis=0)
    for r in range(0, GRID - TILE + 1, STRIDE):
        for c in range(0, GRID - TILE + 1, STRIDE):
            s = slope[r:r + TILE, c:c + TILE]
            zt = z[r:r + TILE, c:c + TILE]
            feat = np.stack([(zt - zt.mean()) / 100.0, s / 45.0, shade[r:r + TILE, c:c + TILE],
                             np.cos(np.radians(aspect[r:r + TILE, c:c + TILE])),
                             np.clip(curv[r:r + TILE, c:c + TILE] * 50, -1, 1)], -1).astype(np.float32)
            prone = float(np.mean((s > 30) & (s < 45)) > 0.02)
            yield feat, np.float32(prone)


def make_dataset(paths):
    sig = (tf.TensorSpec((TILE, TILE, 5), tf.float32), tf.TensorSpec((), tf.float32))
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=SEED).repeat()
    return (files.interleave(lambda p: tf.data.Dataset.from_generator(terrain_tiles, output_signature=sig, args=(p,)),
                             cycle_length=4, block_length=8)
            .shuffle(256, seed=SEED).batch(BATCH).prefetch(2))


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((TILE, TILE, 5)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_ascgrid_hillshade_interleave_avalanche_")
    try:
        paths = write_dems(tmp)
        ds = make_dataset(paths)
        model = build_model()
        timer = StepTimer()
        hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = f"ascgrid avalanche: acc={hist.history['accuracy'][-1]:.3f} step={full*1000:.1f}ms main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            t2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
