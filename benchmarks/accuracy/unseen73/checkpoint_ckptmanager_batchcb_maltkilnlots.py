"""Malting house: predicts kiln-cycle moisture outcome per malt lot from the
barley lot id, supplier and kiln telemetry.  Input path: in-memory tensors ->
tf.data -> model.fit.  Deliberate bottleneck: checkpointing - a batch-end
callback writes a tf.train.CheckpointManager checkpoint (model, Adam slots and
the large frozen lot-embedding table) after every batch."""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()

BATCH = 128
EPOCHS = 3
STEPS = 36
LOTS = 400000
EMB = 64
TELE = 32
SAVE_EVERY = 1


def make_data(seed=99):
    rng = np.random.default_rng(seed)
    n = BATCH * STEPS
    lot = rng.integers(0, LOTS, n).astype(np.int32)
    tele = rng.normal(0, 1, (n, TELE)).astype(np.float32)
    y = (tele[:, :4].sum(1) * 0.3 + (lot % 7) * 0.1).astype(np.float32)[:, None]
    return (lot, tele), y


def build_model():
    lot = keras.Input((), dtype="int32"); tele = keras.Input((TELE,))
    e = keras.layers.Embedding(LOTS, EMB, trainable=False, name="lot_table")(lot)  # pretrained, frozen
    x = keras.layers.Concatenate()([e, keras.layers.Dense(64, activation="relu")(tele)])
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model([lot, tele], out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


class CheckpointEveryN(StepTimer):
    """Stamp first, then save, then restart the clock: gaps never contain a save."""

    def __init__(self, root):
        super().__init__()
        self.root = root
        self.save_seconds = 0.0
        self.saves = 0
        self.manager = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if batch % SAVE_EVERY == 0:
            if self.manager is None:
                ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
                self.manager = tf.train.CheckpointManager(ckpt, self.root, max_to_keep=3)
            t = time.perf_counter()
            self.manager.save()
            self.save_seconds += time.perf_counter() - t
            self.saves += 1
            self.last = time.perf_counter()


def train(ds, root):
    keras.utils.set_random_seed(16)
    model = build_model()
    cb = CheckpointEveryN(root)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb


def main():
    args = parse_args()
    root = tempfile.mkdtemp(prefix="u73_checkpoint_ckptmanager_batchcb_maltkilnlots_")
    try:
        (lot, tele), y = make_data()
        ds = tf.data.Dataset.from_tensor_slices(((lot, tele), y)).shuffle(4096, seed=4).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
        full, cb = train(ds, os.path.join(root, "full"))
        wall = time.perf_counter() - _T0
        emit({"steps_per_second": 1.0 / full})
        print(f"[maltkilnlots] full run: {full * 1000:.1f} ms/step, {cb.saves} saves {cb.save_seconds:.1f}s = {100 * cb.save_seconds / wall:.0f}% of wall {wall:.1f}s")
        if args.truth:
            batch = next(iter(ds))
            compute, cb2 = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(root, "truth"))
            frac = input_fraction(full, compute)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - _T0
            print(f"[maltkilnlots] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, saves total {cb.save_seconds + cb2.save_seconds:.1f}s = {100 * (cb.save_seconds + cb2.save_seconds) / wall:.0f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
