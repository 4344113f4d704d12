"""Neuroradiology: detect white-matter lesions on 2.5D slabs of brain MRI volumes.

Each synthetic subject is written as a gzip-compressed NIfTI-1 file (.nii.gz:
348-byte header packed with struct, int16 voxels, scl_slope/scl_inter). A
keras.utils.PyDataset decompresses each file, parses the header, rescales the
voxels, samples a random three-slice axial slab and applies percentile
clipping and z-scoring before model.fit sees it.
"""
import gzip
import json
import os
import shutil
import struct
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N_SUBJECTS = 64
SHAPE = (64, 64, 36)  # x, y, z
BATCH = 16
STEPS = 40
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def nifti_header(shape, slope, inter):
    hdr = bytearray(348)
    struct.pack_into("<i", hdr, 0, 348)
    struct.pack_into("<8h", hdr, 40, 3, shape[0], shape[1], shape[2], 1, 1, 1, 1)
    struct.pack_into("<hh", hdr, 70, 4, 16)  # datatype int16, bitpix
    struct.pack_into("<8f", hdr, 76, 1.0, 1.0, 1.0, 3.0, 0, 0, 0, 0)
    struct.pack_into("<f", hdr, 108, 352.0)  # vox_offset
    struct.pack_into("<ff", hdr, 112, slope, inter)
    hdr[344:348] = b"n+1\x00"
    return bytes(hdr) + b"\x00" * 4


def write_subjects(root, rng):
    paths, labels = [], []
    xx, yy, zz = np.meshgrid(*[np.linspace(-1, 1, s) for s in SHAPE], indexing="ij")
    brain = (xx ** 2 / 0.8 + yy ** 2 / 0.9 + zz ** 2 / 1.0) < 1.0
    for s in range(N_SUBJECTS):
        vol = (brain * rng.normal(600, 60, SHAPE)) + rng.normal(0, 20, SHAPE)
        lab = int(s % 2)
        if lab:
            for _ in range(rng.integers(3, 8)):
                c = rng.uniform(-0.5, 0.5, 3)
                vol += 350 * np.exp(-(((xx - c[0]) ** 2 + (yy - c[1]) ** 2 + (zz - c[2]) ** 2) / 0.01))
        slope = float(rng.uniform(0.5, 2.0))
        raw = np.clip(vol / slope, -32000, 32000).astype("<i2")
        p = os.path.join(root, "sub-%03d_FLAIR.nii.gz" % s)
        with gzip.open(p, "wb", compresslevel=6) as f:
            f.write(nifti_header(SHAPE, slope, 0.0))
            f.write(raw.tobytes(order="F"))
        paths.append(p)
        labels.append(lab)
    return paths, np.array(labels, np.float32)


def load_nifti(path):
    with gzip.open(path, "rb") as f:
        buf = f.read()
    dims = struct.unpack_from("<8h", buf, 40)
    datatype, _ = struct.unpack_from("<hh", buf, 70)
    vox_offset = int(struct.unpack_from("<f", buf, 108)[0])
    slope, inter = struct.unpack_from("<ff", buf, 112)
    assert buf[344:347] == b"n+1" and datatype == 4
    shape = dims[1:1 + dims[0]]
    data = np.frombuffer(buf, dtype="<i2", offset=vox_offset, count=int(np.prod(shape)))
    data = data.reshape(shape, order="F").astype(np.float32)
    if slope not in (0.0, 1.0):
        data = data * slope + inter
    return data


class SlabSequence(keras.utils.PyDataset):
    def __init__(self, paths, labels, batch_size, seed, **kw):
        super().__init__(**kw)
        self.paths, self.labels, self.bs = paths, labels, batch_size
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        pick = self.rng.integers(0, len(self.paths), self.bs)
        xs = np.empty((self.bs, SHAPE[0], SHAPE[1], 3), np.float32)
        for j, i in enumerate(pick):
            vol = load_nifti(self.paths[i])
            # whole-volume intensity normalisation over the head mask, then a random axial slab
            fg = vol[vol > 100]
            lo, hi = np.percentile(fg, [0.5, 99.5])
            vol = (np.clip(vol, lo, hi) - fg.mean()) / (fg.std() + 1e-6)
            k = int(self.rng.integers(8, SHAPE[2] - 8))
            xs[j] = vol[:, :, k - 1:k + 2]
        return xs, self.labels[pick]


def build_model():
    inp = keras.Input((SHAPE[0], SHAPE[1], 3))
    x = inp
    for f in (32, 64, 96):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def run(data, steps=None):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer], verbose=2)
    return timer.sec_per_step()


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_input_niftigz_pydataset_brainmri_")
    try:
        paths, labels = write_subjects(tmp, rng)
        seq = SlabSequence(paths, labels, BATCH, seed=3)
        full = run(seq)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step" % (full * 1e3)
        if "--truth" in sys.argv:
            batch = seq[0]
            comp = run(tf.data.Dataset.from_tensors(batch).repeat(), steps=STEPS)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_niftigz_pydataset_brainmri:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
