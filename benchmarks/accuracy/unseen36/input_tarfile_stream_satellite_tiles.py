"""Land-cover classification of multispectral satellite tiles streamed from a tar archive.

The tiles are delivered as one gzip-compressed tar archive (the way the
imagery vendor ships them): each member is a .npy uint16 tile with 6 bands,
the class is encoded in the member name.  The training generator streams
the archive member by member (tarfile mode "r|gz"), decodes each tile,
rescales the reflectances, computes an NDVI band and yields batches to fit.
"""
import argparse
import io
import json
import os
import shutil
import tarfile
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

TILE = 64
BANDS = 6
CLASSES = 10
BATCH = 32
N_TILES = 1600
STEPS_PER_EPOCH = N_TILES // BATCH
EPOCHS = 5
FILTERS = 10


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def write_archive(path, rng):
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for i in range(N_TILES):
            label = int(rng.integers(CLASSES))
            base = rng.normal(1500 + 300 * label, 400, (1, 1, BANDS))
            tile = (base + rng.normal(0, 250, (TILE, TILE, BANDS))).clip(0, 10000).astype(np.uint16)
            buf = io.BytesIO()
            np.save(buf, tile)
            info = tarfile.TarInfo(f"tiles/scene{i // 100:03d}/tile_{i:05d}_c{label}.npy")
            info.size = buf.tell()
            buf.seek(0)
            tar.addfile(info, buf)


def tile_batches(path):
    while True:  # one pass over the archive per epoch
        xs, ys = [], []
        with tarfile.open(path, "r|gz") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                raw = np.load(io.BytesIO(tar.extractfile(member).read())).astype(np.float32)
                refl = raw / 10000.0
                red, nir = refl[..., 2], refl[..., 3]
                ndvi = (nir - red) / (nir + red + 1e-6)
                x = np.concatenate([refl, ndvi[..., None]], axis=-1)
                x = (x - x.mean(axis=(0, 1))) / (x.std(axis=(0, 1)) + 1e-6)
                xs.append(x)
                ys.append(int(member.name.rsplit("_c", 1)[1].split(".")[0]))
                if len(xs) == BATCH:
                    yield np.stack(xs), np.array(ys, dtype=np.int32)
                    xs, ys = [], []


def build_model():
    keras.utils.set_random_seed(3)
    model = keras.Sequential([
        keras.Input((TILE, TILE, BANDS + 1)),
        keras.layers.Conv2D(FILTERS, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(FILTERS * 2, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(FILTERS * 4, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="u36_input_tarfile_stream_satellite_tiles_")
    try:
        archive = os.path.join(workdir, "landcover_tiles.tar.gz")
        write_archive(archive, np.random.default_rng(0))
        t0 = time.perf_counter()
        full = train(tile_batches(archive))
        report(steps_per_second=1.0 / full)
        msg = f"satellite tiles: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s"
        if args.truth:
            batch = next(tile_batches(archive))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(msg + f", wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
