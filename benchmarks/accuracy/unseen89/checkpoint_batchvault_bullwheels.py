"""Chairlift bullwheel bearings: vibration-band features predict bearing wear;
a maintenance-audit callback saves the full model (.keras) after every batch
so the lift engineer can roll back. Checkpoint-bound."""
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


FEAT = 96
N = 8192
BATCH = 32
STEPS = 60
EPOCHS = 2
SAVE_SECONDS = [0.0]


def make_vibration(seed=89):
    rng = np.random.default_rng(seed)
    wear = rng.uniform(0, 1, N).astype(np.float32)
    bands = np.linspace(0, 1, FEAT)[None, :]
    x = rng.normal(0, 0.1, (N, FEAT)) + wear[:, None] * np.exp(-((bands - 0.7) ** 2) / 0.01)
    return x.astype(np.float32), wear[:, None]


class VaultTimer(keras.callbacks.Callback):
    """Stamps the step, then saves the whole model, then restarts the clock."""

    def __init__(self, root, tag):
        super().__init__()
        self.path = os.path.join(root, "bullwheel_%s_latest.keras" % tag)
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        done = time.perf_counter()
        SAVE_SECONDS[0] += done - now
        self.last = done

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out, name="bearing_wear")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def train(ds, root, tag):
    model = build_model()
    vault = VaultTimer(root, tag)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[vault], verbose=0)
    return vault.seconds_per_step(), time.perf_counter() - t


def main():
    root = tempfile.mkdtemp(prefix="u89_bullwheels_")
    try:
        x, y = make_vibration()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=89).repeat().batch(BATCH).prefetch(2)
        full, fit_s = train(ds, root, "run")
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T0
        print("bullwheels normal: %.4f s/step, fit %.1f s, saves %.1f s = %.0f%% of wall %.1f s"
              % (full, fit_s, SAVE_SECONDS[0], 100 * SAVE_SECONDS[0] / wall, wall))
        if TRUTH:
            comp, _ = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), root, "truth")
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - T0
            print("bullwheels truth: compute %.4f s/step, input fraction %.3f, saves %.1f s = %.0f%% of wall %.1f s"
                  % (comp, frac, SAVE_SECONDS[0], 100 * SAVE_SECONDS[0] / wall, wall))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
