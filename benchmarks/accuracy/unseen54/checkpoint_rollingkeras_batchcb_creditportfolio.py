"""Credit-portfolio probability-of-default model with rolling intra-epoch snapshots.

Synthetic borrower-level features for a commercial loan book (leverage,
coverage ratios, sector one-hots, macro scenario variables) are generated in
memory.  Because the risk team wants to be able to resume and audit any point
of training, a batch-level callback writes a full .keras archive plus a
tf.train.Checkpoint of model and optimizer, plus a weights-only .h5 for the
scoring service, after every batch and prunes the older ones, keeping the last
three of each.
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

N_LOANS = 8000
FEATS = 64
BATCH = 256
EPOCHS = 3
SAVE_EVERY = 1
KEEP = 3


class StepTimer(keras.callbacks.Callback):
    """Gap = end of this step minus the end of the previous step's callbacks."""

    def __init__(self):
        super().__init__()
        self.gaps, self._resume = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._resume = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._resume is not None:
            self.gaps.append(t - self._resume)

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class ResumeMark(keras.callbacks.Callback):
    def __init__(self, timer):
        super().__init__()
        self.timer = timer

    def on_train_batch_end(self, batch, logs=None):
        self.timer._resume = time.perf_counter()


class RollingSnapshots(keras.callbacks.Callback):
    def __init__(self, root):
        super().__init__()
        self.root, self.seconds, self.n = root, 0.0, 0
        os.makedirs(root, exist_ok=True)
        self.ckpt = None

    def on_train_begin(self, logs=None):
        self.ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.manager = tf.train.CheckpointManager(self.ckpt, os.path.join(self.root, "tf"), max_to_keep=KEEP)

    def on_train_batch_end(self, batch, logs=None):
        if batch % SAVE_EVERY:
            return
        t = time.perf_counter()
        self.model.save(os.path.join(self.root, f"pd_model_{self.n:05d}.keras"))
        self.manager.save()
        self.model.save_weights(os.path.join(self.root, f"pd_scoring_{self.n:05d}.weights.h5"))
        for pattern in ("pd_model_*.keras", "pd_scoring_*.weights.h5"):
            for old in sorted(glob.glob(os.path.join(self.root, pattern)))[:-KEEP]:
                os.remove(old)
        self.n += 1
        self.seconds += time.perf_counter() - t


def make_book(rng):
    x = rng.normal(0, 1, (N_LOANS, FEATS)).astype(np.float32)
    sector = rng.integers(0, 16, N_LOANS)
    x[:, 48:] = np.eye(16, dtype=np.float32)[sector]
    z = 1.2 * x[:, 0] - 0.8 * x[:, 1] + 0.5 * x[:, 2] * x[:, 3] + 0.3 * (sector % 4) - 2.5
    y = (rng.random(N_LOANS) < 1 / (1 + np.exp(-z))).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.BatchNormalization()(x)
    for _ in range(3):
        h = keras.layers.Dense(512, activation="relu")(x)
        h = keras.layers.Dropout(0.1)(h)
        x = keras.layers.Add()([x, keras.layers.Dense(512)(h)])
        x = keras.layers.LayerNormalization()(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.AUC(from_logits=True)])
    return m


def train(data, root, **kw):
    keras.utils.set_random_seed(23)
    model = build_model()
    timer = StepTimer()
    snaps = RollingSnapshots(root)
    model.fit(data, epochs=EPOCHS, callbacks=[timer, snaps, ResumeMark(timer)], verbose=0, **kw)
    return timer.sec_per_step(), snaps


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_checkpoint_rollingkeras_batchcb_creditportfolio_")
    try:
        x, y = make_book(np.random.default_rng(54))
        steps = N_LOANS // BATCH
        full, snaps = train(x, os.path.join(tmp, "run"), y=y, batch_size=BATCH, shuffle=True)
        wall = time.perf_counter() - t0
        append({"steps_per_second": 1.0 / full})
        msg = (f"full {full*1000:.1f} ms/step, {snaps.n} snapshots in {snaps.seconds:.1f}s "
               f"({100*snaps.seconds/wall:.0f}% of wall so far)")
        if "--truth" in sys.argv:
            batch = (x[:BATCH], y[:BATCH])
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"),
                            steps_per_epoch=steps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"checkpoint_rollingkeras_batchcb_creditportfolio: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
