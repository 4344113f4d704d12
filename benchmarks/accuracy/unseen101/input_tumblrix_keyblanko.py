import time; T0 = time.perf_counter()
"""Key-blank classifier fed by a Python generator through tf.data.Dataset.from_generator.

Each sample is a synthetic key blank: six bitting depths are cut, and a feature
vector is derived from the cut profile with plain Python loops.  The generator is
wrapped in from_generator -> batch -> prefetch and trained with model.fit.
"""
import os, sys, json, math, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1011
BATCH = 128
STEPS = 130
EPOCHS = 5
N_PINS = 6
FEATS = 64
PASSES = 2          # Python smoothing passes over each cut profile
N_CLASSES = 5


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


def cut_key(rng):
    depths = [rng.randint(0, 9) for _ in range(N_PINS)]
    # blade profile sampled at FEATS points along the key, cut by each depth
    profile = []
    for i in range(FEATS):
        pos = i / (FEATS - 1) * N_PINS
        pin = min(int(pos), N_PINS - 1)
        frac = pos - pin
        d = depths[pin]
        nxt = depths[min(pin + 1, N_PINS - 1)]
        profile.append(d + (nxt - d) * max(0.0, frac - 0.7) / 0.3)
    for _ in range(PASSES):
        smooth = [profile[0]]
        for i in range(1, FEATS - 1):
            smooth.append(0.25 * profile[i - 1] + 0.5 * profile[i] + 0.25 * profile[i + 1]
                          + 0.01 * math.sin(profile[i]))
        smooth.append(profile[-1])
        profile = smooth
    macs = max(abs(depths[i] - depths[i + 1]) for i in range(N_PINS - 1))
    label = min(macs // 2, N_CLASSES - 1)
    return [p / 9.0 for p in profile], label


def key_blanks():
    rng = random.Random(SEED)
    while True:
        feats, label = cut_key(rng)
        yield np.asarray(feats, np.float32), np.int32(label)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


ds = tf.data.Dataset.from_generator(
    key_blanks,
    output_signature=(tf.TensorSpec((FEATS,), tf.float32), tf.TensorSpec((), tf.int32)),
).batch(BATCH).prefetch(tf.data.AUTOTUNE)

full = train(ds)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"input_tumblrix_keyblanko: {1.0/full:.2f} steps/s, wall {wall:.1f}s"

if TRUTH:
    rng = random.Random(SEED + 7)
    xs, ys = zip(*(cut_key(rng) for _ in range(BATCH)))
    batch = (np.asarray(xs, np.float32), np.asarray(ys, np.int32))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
