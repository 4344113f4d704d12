import time; T0 = time.perf_counter()
# Commercial dryer cycle records (load weight, fabric mix, inlet air temp,
# exhaust humidity curve summary, lint screen pressure drop) -> gas used per
# cycle. The team is nervous about losing the model, so a callback saves the
# full model as a .keras archive after every training batch.
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
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


SAVE_SECONDS = [0.0, 0]


class TimedEveryBatchSaver(keras.callbacks.Callback):
    """Stamps step time, then saves the full model; the clock restarts after the save."""

    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        path = os.path.join(self.folder, f"dryer_gas_b{batch % 3}.keras")
        self.model.save(path, overwrite=True)
        done = time.perf_counter()
        SAVE_SECONDS[0] += done - now
        SAVE_SECONDS[1] += 1
        self.last = done

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


BATCH = 32
STEPS = 60
EPOCHS = 3
N_FEAT = 48
N = BATCH * STEPS

rng = np.random.default_rng(4092)
load = rng.uniform(10, 60, (N, 1))
cotton = rng.uniform(0, 1, (N, 1))
inlet = rng.uniform(60, 95, (N, 1))
lint_dp = rng.gamma(2, 0.3, (N, 1))
curve = np.exp(-np.linspace(0, 3, N_FEAT - 4)[None, :] * (inlet / 80) / (0.5 + cotton)) + rng.normal(0, 0.02, (N, N_FEAT - 4))
X = np.concatenate([load / 60, cotton, inlet / 100, lint_dp, curve], 1).astype(np.float32)
Y = (load * (0.6 + cotton) * (1 + 0.3 * lint_dp) / 10 + rng.normal(0, 0.5, (N, 1))).astype(np.float32)


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def train(ds, folder):
    keras.utils.set_random_seed(44)
    model = make_model()
    saver = TimedEveryBatchSaver(folder)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0, shuffle=False)
    return saver.seconds_per_step()


root = tempfile.mkdtemp(prefix="u92_checkpoint_everystepkeras_dryercycles_")
try:
    ds = (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N, seed=3)
          .batch(BATCH, drop_remainder=True).repeat().prefetch(2))
    full = train(ds, root)
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"[dryercycles] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, {SAVE_SECONDS[1]} saves "
          f"took {SAVE_SECONDS[0]:.1f}s of {wall:.1f}s wall = {100*SAVE_SECONDS[0]/wall:.1f}%")

    if TRUTH:
        one = (X[:BATCH], Y[:BATCH])
        compute = train(tf.data.Dataset.from_tensors(one).repeat(), root)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"[dryercycles] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}; {SAVE_SECONDS[1]} saves took {SAVE_SECONDS[0]:.1f}s of "
              f"{wall:.1f}s wall = {100*SAVE_SECONDS[0]/wall:.1f}%")
finally:
    shutil.rmtree(root, ignore_errors=True)
