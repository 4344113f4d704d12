"""Dredger production-rate regression with a save-every-few-batches callback (marine construction).

Data path: in-memory numpy pump/cutter telemetry features -> tf.data -> model.fit.
Checkpointing: one callback that both times steps and saves the full model
(model.save to .keras) every SAVE_EVERY batches, keeping a rolling copy.
Known bottleneck: checkpoint saves.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import keras

BATCH = 4
STEPS = 25
EPOCHS = 2
SAVE_EVERY = 1
NFEAT = 64


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


class TimedBatchSaver(keras.callbacks.Callback):
    """Times steps and saves; gaps never contain a save."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.gaps, self.last = folder, [], None
        self.save_s, self.saves, self.seen = 0.0, 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.seen += 1
        if self.seen % SAVE_EVERY == 0:
            t = time.perf_counter()
            path = os.path.join(self.folder, "dredge_step%05d.keras" % self.seen)
            self.model.save(path)
            old = os.path.join(self.folder, "dredge_step%05d.keras" % (self.seen - 2 * SAVE_EVERY))
            if os.path.exists(old):
                os.remove(old)
            self.save_s += time.perf_counter() - t
            self.saves += 1
        self.last = time.perf_counter()


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_data(seed=6, n=6000):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, NFEAT)).astype(np.float32)  # swing speed, pump vacuum, density...
    y = (np.tanh(x[:, :8]).sum(1) * 120 + 900 + rng.normal(0, 30, n)).astype(np.float32)
    return x, y / 1000.0


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(2048, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds, folder):
    keras.utils.set_random_seed(0)
    model = build_model()
    cb = TimedBatchSaver(folder)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u67_checkpoint_batchsave_callback_dredgefleet_")
    try:
        x, y = make_data()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=0).repeat().batch(BATCH)
        t = time.perf_counter()
        full, cb = run(ds, tmp)
        wall = time.perf_counter() - _T0
        print("[batchsave] steps/s=%.2f sec/step=%.4f saves=%d save_s=%.1f fit_s=%.1f save_share_of_wall=%.2f wall_s=%.1f" % (
            1 / full, full, cb.saves, cb.save_s, time.perf_counter() - t, cb.save_s / wall, wall))
        emit({"steps_per_second": 1.0 / full})
        if args.truth:
            batch = next(iter(ds))
            comp, cb2 = run(tf.data.Dataset.from_tensors(batch).repeat(), tmp)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            print("[batchsave] truth compute sec/step=%.4f input_fraction=%.3f (saves=%d)" % (comp, frac, cb2.saves))
            emit({"truth_input_fraction": frac})
        print("[batchsave] wall_s=%.1f" % (time.perf_counter() - _T0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
