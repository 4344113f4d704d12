import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Seedling-tray phenotyping: tray-cell photos are stored zlib-compressed; a
# keras.utils.PyDataset decompresses, crops, flips and colour-jitters each cell
# image in numpy and computes an excess-green channel, feeding model.fit.
import zlib

BATCH = 32
STEPS = 150
EPOCHS = 3
N_IMG = 1024
SIDE = 40
CROP = 32
CLASSES = 5  # germination stage

rng = np.random.default_rng(78)
LABELS = rng.integers(CLASSES, size=N_IMG)
BLOBS = []
for i in range(N_IMG):
    img = rng.integers(0, 255, (SIDE, SIDE, 3), dtype=np.uint8)
    img[..., 1] = np.clip(img[..., 1].astype(int) + 20 * LABELS[i], 0, 255).astype(np.uint8)
    BLOBS.append(zlib.compress(img.tobytes(), 6))


def decode_cell(blob, r):
    img = np.frombuffer(zlib.decompress(blob), np.uint8).reshape(SIDE, SIDE, 3).astype(np.float32) / 255.0
    oy, ox = r.integers(0, SIDE - CROP + 1, 2)
    img = img[oy:oy + CROP, ox:ox + CROP]
    if r.random() < 0.5:
        img = img[:, ::-1]
    img = img * r.uniform(0.8, 1.2, (1, 1, 3)).astype(np.float32)
    exg = 2 * img[..., 1] - img[..., 0] - img[..., 2]
    # row-wise leaf-edge density at several excess-green thresholds (seedling outline cue)
    edges = np.zeros((CROP, CROP), np.float32)
    for thr in THRESHOLDS:
        mask = (exg > thr).astype(np.int8)
        for row in range(CROP):
            edges[row, :] += np.count_nonzero(np.diff(mask[row])) / (CROP * len(THRESHOLDS))
    return np.concatenate([img, exg[..., None], edges[..., None]], axis=-1)


THRESHOLDS = (0.0, 0.1)


class TrayCells(keras.utils.PyDataset):
    def __init__(self):
        super().__init__(workers=1, use_multiprocessing=False)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        r = np.random.default_rng(idx)
        ids = r.integers(0, N_IMG, BATCH)
        x = np.stack([decode_cell(BLOBS[i], r) for i in ids])
        return x, LABELS[ids].astype(np.int32)


def build():
    m = keras.Sequential([keras.Input((CROP, CROP, 5)),
                          keras.layers.Conv2D(16, 3, strides=2, activation="relu", padding="same"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu", padding="same"),
                          keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(data):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        m.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        m.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(TrayCells())
emit({"steps_per_second": 1.0 / full})
print(f"[input_pydataset_seedlingtray] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    x0, y0 = TrayCells()[0]
    comp = run(tf.data.Dataset.from_tensors((x0, y0)).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_pydataset_seedlingtray] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
