"""Wind-turbine gearbox fault classification from SCADA feature vectors.

A wide MLP trained with model.fit; a ModelCheckpoint callback writes
.weights.h5 files after every batch (save_freq=1), so saving dominates the
wall time.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 512
N_SAMPLES = 8192
BATCH = 32
STEPS = 60
EPOCHS = 2
SAVE_FREQ = 1
N_CLASSES = 6


class TimedCheckpoint(keras.callbacks.ModelCheckpoint):
    """ModelCheckpoint that also keeps the seconds it spent saving."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.spent = 0.0
        self.saves = 0

    def on_train_batch_end(self, batch, logs=None):
        t0 = time.perf_counter()
        saving = self._should_save_on_batch(batch)
        if saving:
            self._save_model(epoch=self._current_epoch, batch=batch, logs=logs)
            self.saves += 1
        self.spent += time.perf_counter() - t0


class StepClock(keras.callbacks.Callback):
    """Seconds per training step; time spent inside the checkpoint callback is taken out."""

    def __init__(self, ckpt):
        super().__init__()
        self.ckpt = ckpt
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        spent = self.ckpt.spent
        if self._last is not None:
            self.gaps.append(now - self._last[0] - (spent - self._last[1]))
        self._last = (now, spent)

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def make_model():
    inputs = keras.Input((N_FEATURES,))
    h = keras.layers.Dense(2048, activation="relu")(inputs)
    h = keras.layers.Dense(2048, activation="relu")(h)
    h = keras.layers.Dense(1024, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(N_CLASSES)(h))
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds, ckpt_dir, clocks):
    keras.utils.set_random_seed(12)
    model = make_model()
    ckpt = TimedCheckpoint(os.path.join(ckpt_dir, "turbine-e{epoch:02d}.weights.h5"),
                           save_weights_only=True, save_freq=SAVE_FREQ)
    clock = StepClock(ckpt)
    clocks.append(clock)
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[ckpt, clock], verbose=0)
    return hist, ckpt, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N_SAMPLES, N_FEATURES)).astype(np.float32)
    y = np.argmax(x[:, :N_CLASSES] + 0.5 * x[:, N_CLASSES:2 * N_CLASSES], axis=1).astype(np.int32)
    tmp = tempfile.mkdtemp(prefix="u33_checkpoint_savefreq_turbinefaults_")
    try:
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_SAMPLES, seed=0).batch(BATCH).repeat().prefetch(2)
        clocks = []
        hist, ckpt, wall = train(ds, tmp, clocks)
        full = clocks[0].seconds_per_step()
        report(steps_per_second=1.0 / full)
        msg = (f"turbinefaults: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, {ckpt.saves} saves, "
               f"save share {ckpt.spent / wall:.2f}, acc {hist.history['accuracy'][-1]:.3f}")
        if args.truth:
            train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), tmp, clocks)
            compute = clocks[1].seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", truth_input_fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
