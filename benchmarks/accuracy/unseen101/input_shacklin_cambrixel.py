import time; T0 = time.perf_counter()
"""Safe-dial combination scorer: from_tensor_slices -> serial map(tf.numpy_function).

Each element is a raw dial recording (turn directions and stopping numbers).  A
Python function called through tf.numpy_function decodes it element by element
into a wheel-pack contact profile; the map is serial (no num_parallel_calls).
"""
import os, sys, json, math
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1013
BATCH = 96
STEPS = 180
EPOCHS = 5
N_RECORDS = 6000
TURNS = 4
FEATS = 48
N_CLASSES = 4


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rs = np.random.RandomState(SEED)
dial_records = rs.randint(0, 100, size=(N_RECORDS, TURNS)).astype(np.int32)
dial_labels = (dial_records[:, :3].sum(axis=1) // 75).clip(0, N_CLASSES - 1).astype(np.int32)


def decode_dial(record):
    # walk the dial: each stop drags the wheel pack, leaving a contact profile
    wheels = [0.0, 0.0, 0.0]
    profile = []
    pos = 0
    for t, stop in enumerate(record.tolist()):
        direction = 1 if t % 2 == 0 else -1
        while pos != stop:
            pos = (pos + direction) % 100
            w = t % 3
            wheels[w] = 0.98 * wheels[w] + 0.02 * math.cos(pos * math.pi / 50)
        for k in range(FEATS // TURNS):
            profile.append(wheels[(t + k) % 3] + 0.001 * k * stop)
    return np.asarray(profile, np.float32)


def to_features(record, label):
    x = tf.numpy_function(decode_dial, [record], tf.float32)
    x.set_shape((FEATS,))
    return x, label


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


ds = (tf.data.Dataset.from_tensor_slices((dial_records, dial_labels))
      .shuffle(N_RECORDS, seed=SEED)
      .map(to_features)
      .batch(BATCH)
      .repeat())

full = train(ds)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"input_shacklin_cambrixel: {1.0/full:.2f} steps/s, wall {wall:.1f}s"

if TRUTH:
    xb = np.stack([decode_dial(r) for r in dial_records[:BATCH]])
    batch = (xb, dial_labels[:BATCH])
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
