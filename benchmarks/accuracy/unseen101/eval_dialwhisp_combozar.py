import time; T0 = time.perf_counter()
"""Safe-dial wear classifier whose epoch-end callback scores a large held-out audit set.

Training is a short NumPy-array fit; at every epoch end a callback runs
model.predict and model.evaluate over a big held-out set of dial-wear readings,
so end-of-epoch evaluation dominates the wall time.
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1019
BATCH = 128
N_TRAIN = 128 * 60
N_HELDOUT = 240_000
EPOCHS = 4
FEATS = 96
N_CLASSES = 6


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


class HeldoutAudit(keras.callbacks.Callback):
    """Scores the whole held-out audit set after every epoch."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x, batch_size=512, verbose=0)
        acc = float((probs.argmax(axis=1) == self.y).mean())
        res = self.model.evaluate(self.x, self.y, batch_size=512, verbose=0, return_dict=True)
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: heldout acc {acc:.3f} loss {res['loss']:.3f}")


rs = np.random.RandomState(SEED)
proto = rs.normal(0, 1, (N_CLASSES, FEATS)).astype(np.float32)


def dial_readings(n):
    y = rs.randint(0, N_CLASSES, n).astype(np.int32)
    x = proto[y] + rs.normal(0, 4.0, (n, FEATS)).astype(np.float32)
    return x, y


x_train, y_train = dial_readings(N_TRAIN)
x_held, y_held = dial_readings(N_HELDOUT)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


model = build_model()
timer, audit = StepTimer(), HeldoutAudit(x_held, y_held)
t_fit = time.perf_counter()
model.fit(x_train, y_train, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
fit_wall = time.perf_counter() - t_fit
full = timer.sec_per_step()
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = (f"eval_dialwhisp_combozar: {1.0/full:.2f} steps/s, eval {audit.seconds:.1f}s = "
       f"{audit.seconds/wall:.0%} of wall {wall:.1f}s ({audit.seconds/fit_wall:.0%} of fit)")

if TRUTH:
    batch = (x_train[:BATCH], y_train[:BATCH])
    model = build_model()
    timer, audit = StepTimer(), HeldoutAudit(x_held, y_held)
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
              steps_per_epoch=N_TRAIN // BATCH, callbacks=[timer, audit], verbose=0)
    compute = timer.sec_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
