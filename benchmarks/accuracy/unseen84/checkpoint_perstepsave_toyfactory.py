import time; T0 = time.perf_counter()
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


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


# Toy-factory plush line: each stuffed toy coming off the stitching line is
# described by seam-tension readings, fill weight, eye/nose placement offsets
# and a hashed fabric-lot code; a multilayer classifier flags the QC outcome
# (pass / re-stitch / re-fill / scrap).  The line supervisor wants a full
# .keras snapshot of the model after EVERY batch so a crash never loses
# progress; the callback stamps the step time first, saves, then restarts the
# clock so the step gaps never include a save.
N_FEATS = 256
N_CLASSES = 4
N_TOYS = 20000
BATCH = 32
STEPS = 80
EPOCHS = 2


class StampAndSnapshot(keras.callbacks.Callback):
    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None
        self.save_seconds = 0.0
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        done = time.perf_counter()
        self.save_seconds += done - now
        self.saves += 1
        self.last = done

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


def make_line_data(seed):
    rng = np.random.default_rng(seed)
    seam = rng.normal(1.0, 0.15, (N_TOYS, 96))
    fill = rng.normal(0.0, 1.0, (N_TOYS, 32))
    face = rng.normal(0.0, 0.5, (N_TOYS, 16))
    lot = (rng.random((N_TOYS, N_FEATS - 144)) < 0.05).astype(np.float64)
    x = np.concatenate([seam, fill, face, lot], axis=1).astype(np.float32)
    score = np.stack([np.zeros(N_TOYS), seam.std(1) * 4, np.abs(fill[:, 0]), np.abs(face).max(1)], axis=1)
    y = np.argmax(score + rng.gumbel(size=score.shape) * 0.3, axis=1).astype(np.int32)
    return x, y


def make_model():
    inp = keras.Input((N_FEATS,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds, path):
    keras.utils.set_random_seed(83)
    model = make_model()
    cb = StampAndSnapshot(path)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return cb.seconds_per_step(), cb.save_seconds, cb.saves


def main():
    root = tempfile.mkdtemp(prefix="u84_checkpoint_perstepsave_toyfactory_")
    try:
        path = os.path.join(root, "plush_qc_latest.keras")
        x, y = make_line_data(89)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TOYS, seed=5).batch(BATCH).repeat().prefetch(2)
        full, save_s, saves = run(ds, path)
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T0
        print(f"toyfactory: {full * 1000:.1f} ms/step, {saves} saves took {save_s:.1f} s of wall {wall:.1f} s "
              f"= {100 * save_s / wall:.1f}% of wall ({os.path.getsize(path) / 2**20:.1f} MiB each)")
        if TRUTH:
            one = next(iter(ds))
            compute, save_s2, saves2 = run(tf.data.Dataset.from_tensors(one).repeat(), path)
            frac = input_fraction(full, compute)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - T0
            print(f"toyfactory truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
                  f"saves {save_s + save_s2:.1f} s of wall {wall:.1f} s = {100 * (save_s + save_s2) / wall:.1f}%")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
