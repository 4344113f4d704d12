"""Pick-and-place grasp-success predictor with a batch-level checkpoint callback.

Features (gripper pose, object bounding box, suction pressure trace summary) are held in
memory. A callback writes a full .keras archive (weights + optimizer state) plus a
.weights.h5 export for the cell controller after every batch, into three rotating slots. The same callback stamps the step clock
before each save and restarts it after, so step gaps never contain a save. The saves
dominate the wall time by design.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import shutil
import tempfile
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 8
N = 8 * 35
EPOCHS = 2
STEPS = N // BATCH
SAVE_EVERY = 1
FEATS = 48


class TimedRotatingSaver(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.gaps, self.last = [], None
        self.save_seconds, self.saves = 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if (batch + 1) % SAVE_EVERY == 0:
            slot = self.saves % 3
            self.model.save(os.path.join(self.folder, "grasp_%d.keras" % slot))
            self.model.save_weights(os.path.join(self.folder, "grasp_%d.weights.h5" % slot))
            self.saves += 1
            self.last = time.perf_counter()
            self.save_seconds += self.last - now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_grasps(rng):
    x = rng.normal(0, 1, (N, FEATS)).astype(np.float32)
    logit = 1.5 * x[:, 0] - x[:, 1] * x[:, 2] + 0.5 * np.sin(3 * x[:, 3])
    return x, (logit + rng.normal(0, 0.3, N) > 0).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((FEATS,)),
                          keras.layers.Dense(1536, activation="relu"),
                          keras.layers.Dense(1536, activation="relu"),
                          keras.layers.Dense(1536, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile("adam", "binary_crossentropy")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u61_checkpoint_kerasrotate_batchcb_pickandplace_")
    try:
        x, y = make_grasps(np.random.default_rng(SEED))
        model = build_model()
        cb = TimedRotatingSaver(tmp)
        model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[cb], verbose=0)
        full = cb.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        save_s, saves = cb.save_seconds, cb.saves
        msg = "pickandplace rotating .keras saves: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
        if args.truth:
            fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            model2 = build_model()
            cb2 = TimedRotatingSaver(tmp)
            model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb2], verbose=0)
            comp = cb2.seconds_per_step()
            save_s += cb2.save_seconds
            saves += cb2.saves
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        wall = time.perf_counter() - T_START
        print(msg + ", %d saves %.1f s = %.0f%% of wall %.1f s" % (saves, save_s, 100 * save_s / wall, wall))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
