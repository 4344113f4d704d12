import time; T0 = time.perf_counter()
"""Pin-tumbler stack classifier fed by a keras.utils.PyDataset.

__getitem__ builds every batch in Python: for each lock it draws key pins,
driver pins and springs, simulates the shear-line clearance at a few plug
rotations, and returns the resulting feature rows.  workers=1, no multiprocessing.
"""
import os, sys, json, math, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1012
BATCH = 128
STEPS = 150
EPOCHS = 5
N_STACKS = 5
ANGLES = 10         # plug rotations simulated per lock
FEATS = N_STACKS * ANGLES + N_STACKS
N_CLASSES = 3


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


def simulate_lock(rng):
    key_pins = [rng.uniform(0.1, 0.9) for _ in range(N_STACKS)]
    drivers = [rng.uniform(0.3, 0.6) for _ in range(N_STACKS)]
    springs = [rng.uniform(0.5, 1.5) for _ in range(N_STACKS)]
    row = []
    binding = 0
    for a in range(ANGLES):
        theta = a * math.pi / (2 * ANGLES)
        for s in range(N_STACKS):
            gap = 0.0
            for k in range(14):  # settle the stack under spring load
                gap += (key_pins[s] - 0.5 + drivers[s] * 0.1 - gap) * springs[s] * 0.2 * math.cos(theta + k * 0.01)
            row.append(gap)
            if abs(gap) < 0.05:
                binding += 1
    row.extend(key_pins)
    label = 0 if binding < 8 else (1 if binding < 20 else 2)
    return row, label


class PinStackSet(keras.utils.PyDataset):
    def __init__(self, steps):
        super().__init__(workers=1, use_multiprocessing=False)
        self.steps = steps

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        rng = random.Random(SEED * 100003 + idx)
        rows, labels = [], []
        for _ in range(BATCH):
            r, l = simulate_lock(rng)
            rows.append(r)
            labels.append(l)
        return np.asarray(rows, np.float32), np.asarray(labels, np.int32)


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


full_timer = StepTimer()
model = build_model()
model.fit(PinStackSet(STEPS), epochs=EPOCHS, callbacks=[full_timer], verbose=0)
full = full_timer.sec_per_step()
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"input_wardelby_bittlesnap: {1.0/full:.2f} steps/s, wall {wall:.1f}s"

if TRUTH:
    batch = PinStackSet(1)[0]
    model = build_model()
    timer = StepTimer()
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
              steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    compute = timer.sec_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
