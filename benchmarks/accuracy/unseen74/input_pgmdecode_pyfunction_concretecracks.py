"""Concrete-surface crack detector: binary PGM (P5) inspection photos are decoded in a tf.data
map by tf.py_function (header parse, gamma, random crop / flip) before batching into model.fit."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
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


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


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

SRC = 72
CROP = 40
BATCH = 32
STEPS = 30
EPOCHS = 3
N_IMG = 600


def make_pgms(n, seed=41):
    rng = np.random.default_rng(seed)
    blobs, labels = [], []
    yy, xx = np.mgrid[0:SRC, 0:SRC]
    for _ in range(n):
        img = 150 + 20 * rng.standard_normal((SRC, SRC))
        cracked = int(rng.random() < 0.5)
        if cracked:
            x0, slope = rng.uniform(10, 60), rng.uniform(-1.5, 1.5)
            mask = np.abs(xx - (x0 + slope * (yy - SRC / 2))) < rng.uniform(0.6, 2.0)
            img[mask] -= 80
        img = np.clip(img, 0, 255).astype(np.uint8)
        header = f"P5\n# site=pier-{rng.integers(1, 40)} camera=insp\n{SRC} {SRC}\n255\n".encode()
        blobs.append(header + img.tobytes())
        labels.append(cracked)
    return blobs, np.array(labels, np.int32)


_aug = np.random.default_rng(43)


def decode_pgm(blob_t):
    blob = blob_t.numpy()
    fields, pos = [], 0
    while len(fields) < 4:
        end = blob.index(b"\n", pos)
        line = blob[pos:end]
        pos = end + 1
        if line.startswith(b"#"):
            continue
        fields.extend(line.split())
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    img = np.frombuffer(blob, np.uint8, w * h, pos).reshape(h, w).astype(np.float32) / maxval
    img = img ** _aug.uniform(0.8, 1.25)
    oy, ox = _aug.integers(0, h - CROP + 1), _aug.integers(0, w - CROP + 1)
    img = img[oy:oy + CROP, ox:ox + CROP]
    if _aug.random() < 0.5:
        img = img[:, ::-1]
    k = np.ones(3) / 3
    img = np.apply_along_axis(lambda r: np.convolve(r, k, mode="same"), 1, img)
    return img[..., None].astype(np.float32)


def build_model():
    m = keras.Sequential([keras.Input((CROP, CROP, 1)),
                          keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_pgmdecode_pyfunction_concretecracks_")
    try:
        blobs, labels = make_pgms(N_IMG)

        def to_img(raw, lab):
            x = tf.py_function(decode_pgm, [raw], tf.float32)
            x.set_shape((CROP, CROP, 1))
            return x, tf.cast(lab, tf.float32)

        ds = (tf.data.Dataset.from_tensor_slices((blobs, labels))
              .shuffle(N_IMG, seed=2).repeat()
              .map(to_img, num_parallel_calls=2)
              .batch(BATCH).prefetch(2))
        tf.random.set_seed(0)
        timer = StepTimer()
        model = build_model()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_pgmdecode_pyfunction_concretecracks] full {full*1000:.1f} ms/step "
              f"({1.0/full:.2f} steps/s) over {len(timer.gaps)} gaps, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2 = StepTimer()
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_pgmdecode_pyfunction_concretecracks] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
