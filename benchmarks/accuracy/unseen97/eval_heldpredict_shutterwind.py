import time; T0 = time.perf_counter()
import os
import sys
import json
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


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

# Storm-shutter wind sensors: each lantern storm shutter carries an anemometer and a
# strain gauge; the model predicts from a 1-minute gust profile whether the shutter
# should be closed.  Training is small, but after every epoch a callback runs
# model.evaluate over a large held-out archive of past storms (in both runs).

BATCH = 128
STEPS_PER_EPOCH = 40
EPOCHS = 4
SEQ = 60
FEAT = 3
N_TRAIN = 8192
N_HELDOUT = 200_000
EVAL_BATCH = 2048


def make_gusts(n, seed):
    rng = np.random.default_rng(seed)
    base = rng.gamma(2.0, 6.0, (n, 1)).astype(np.float32)
    gust = base + np.abs(np.cumsum(rng.normal(0, 1.0, (n, SEQ)), axis=1)).astype(np.float32)
    direction = (rng.uniform(0, 360, (n, 1)) + np.cumsum(rng.normal(0, 3, (n, SEQ)), axis=1)).astype(np.float32)
    strain = (0.02 * gust ** 2 * np.abs(np.cos(np.deg2rad(direction - 225)))).astype(np.float32)
    x = np.stack([gust / 30.0, np.sin(np.deg2rad(direction)), strain / 20.0], axis=2).astype(np.float32)
    y = (strain.max(axis=1) > 12.0).astype(np.float32)[:, None]
    return x, y


class HeldOutEvaluator(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        res = self.model.evaluate(self.x, self.y, batch_size=EVAL_BATCH, verbose=0, return_dict=True)
        self.seconds += time.perf_counter() - t
        self.last = res


def build_model():
    keras.utils.set_random_seed(11)
    m = keras.Sequential([
        keras.Input((SEQ, FEAT)),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(ds, evaluator):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer, evaluator], verbose=0)
    return timer.seconds_per_step()


xtr, ytr = make_gusts(N_TRAIN, 97)
xho, yho = make_gusts(N_HELDOUT, 98)
evaluator = HeldOutEvaluator(xho, yho)
ds = tf.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(N_TRAIN, seed=2).repeat().batch(BATCH).prefetch(2)
full = train(ds, evaluator)
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"[shutterwind] normal run: {full*1000:.2f} ms/step, held-out evaluation {evaluator.seconds:.1f} s of "
      f"{wall:.1f} s wall = {100*evaluator.seconds/wall:.1f}% (last {evaluator.last})")

if TRUTH:
    ev2 = HeldOutEvaluator(xho, yho)
    one = (tf.constant(xtr[:BATCH]), tf.constant(ytr[:BATCH]))
    compute = train(tf.data.Dataset.from_tensors(one).repeat(), ev2)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    tot = evaluator.seconds + ev2.seconds
    print(f"[shutterwind] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, "
          f"evaluation {tot:.1f} s of {wall:.1f} s wall = {100*tot/wall:.1f}%")
