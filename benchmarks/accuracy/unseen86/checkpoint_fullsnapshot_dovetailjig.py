import time; T0 = time.perf_counter()
"""Dovetail jig joint-fit predictor with a full .keras snapshot after every batch.

A router dovetail jig logs bit height, template offset, stock thickness, feed
rate, bit wear and a 64-point laser profile of each cut pin; the model predicts
the fit gap (mm).  The shop's training script saves the whole model to a
.keras archive after every batch "so no progress is ever lost".
Bottleneck: the full-model saves (checkpoint-bound).
"""
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

PROFILE = 64
FEATS = PROFILE + 5
N = 8192
BATCH = 32
STEPS = 100
EPOCHS = 3


class SnapshotTimer(keras.callbacks.Callback):
    """Stamps step time, then saves the full model; the clock restarts after the save."""

    def __init__(self, path):
        super().__init__()
        self.path, self.gaps, self.last, self.save_seconds, self.saves = path, [], None, 0.0, 0

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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def jig_cuts(seed=86):
    rng = np.random.default_rng(seed)
    bit_h = rng.uniform(9, 13, N)
    offset = rng.normal(0, 0.3, N)
    thick = rng.uniform(12, 22, N)
    feed = rng.uniform(800, 2500, N)
    wear = rng.uniform(0, 1, N)
    s = np.linspace(0, 1, PROFILE)
    profile = (np.sin(np.pi * s)[None, :] * (bit_h[:, None] / 12) + offset[:, None] * 0.1
               + wear[:, None] * 0.05 * rng.normal(0, 1, (N, PROFILE)))
    gap = 0.15 * offset + 0.02 * (bit_h - 11) + 0.05 * wear + 0.00002 * (feed - 1600) + rng.normal(0, 0.01, N)
    x = np.column_stack([profile, (bit_h - 11) / 2, offset, (thick - 17) / 5, (feed - 1600) / 500, wear])
    return x.astype(np.float32), gap.astype(np.float32)


def build_model():
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(ds, path):
    keras.utils.set_random_seed(86)
    model = build_model()
    cb = SnapshotTimer(path)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return cb.seconds_per_step(), cb.save_seconds, cb.saves


def main():
    root = tempfile.mkdtemp(prefix="u86_checkpoint_fullsnapshot_dovetailjig_")
    try:
        x, y = jig_cuts()
        path = os.path.join(root, "dovetail_fit.keras")
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=86).repeat().batch(BATCH).prefetch(2)
        full, save_s, saves = train(ds, path)
        emit({"steps_per_second": 1.0 / full})
        msg = f"[dovetail] full {full*1000:.1f} ms/step"
        if TRUTH:
            fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            compute, save2, saves2 = train(fixed, path)
            save_s += save2
            saves += saves2
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
        wall = time.perf_counter() - T0
        print(msg + f" {saves} saves took {save_s:.1f}s of wall {wall:.1f}s = {save_s / wall:.1%} of wall")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
