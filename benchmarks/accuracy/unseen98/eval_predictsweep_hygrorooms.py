import time; T0 = time.perf_counter()
"""Humidity-room sensors -> paper curl risk.  A small regressor is trained on
windows of folding-room sensor readings (RH, temperature, dew point, sheet
moisture); at the end of every epoch a callback predicts a large held-out
sensor archive and reports per-room error."""
import os, sys, json
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

WINDOW = 24
N_SENSORS = 4
N_TRAIN = 8192
N_HELDOUT = 500_000
N_ROOMS = 8
BATCH = 128
STEPS = 40
EPOCHS = 4

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))

EVAL_SECONDS = [0.0]

class HeldoutRoomReport(keras.callbacks.Callback):
    def __init__(self, x, y, rooms):
        super().__init__(); self.x, self.y, self.rooms = x, y, rooms
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=2048, verbose=0)[:, 0]
        err = np.abs(pred - self.y)
        per_room = [float(err[self.rooms == r].mean()) for r in range(N_ROOMS)]
        EVAL_SECONDS[0] += time.perf_counter() - t
        print(f"  epoch {epoch}: held-out MAE {err.mean():.4f}, worst room {int(np.argmax(per_room))}")

def sensor_windows(rng, n):
    rooms = rng.integers(0, N_ROOMS, n)
    t = np.arange(WINDOW)[None, :]
    base_rh = 40 + 3 * rooms[:, None] + 8 * np.sin(2 * np.pi * (t + rng.uniform(0, 24, (n, 1))) / 24)
    rh = base_rh + rng.normal(0, 1.5, (n, WINDOW))
    temp = 21 + 0.1 * rooms[:, None] - 0.05 * (rh - 50) + rng.normal(0, 0.3, (n, WINDOW))
    dew = temp - (100 - rh) / 5
    moist = 5 + 0.08 * rh + rng.normal(0, 0.2, (n, WINDOW))
    x = np.stack([(rh - 50) / 10, (temp - 21) / 2, (dew - 10) / 5, (moist - 9) / 2], -1).astype(np.float32)
    curl = (0.03 * (rh[:, -6:].mean(1) - 50) + 0.2 * np.abs(np.diff(moist, axis=1)).mean(1)).astype(np.float32)
    return x, curl, rooms

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((WINDOW, N_SENSORS)),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model

def train(data, report):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, report], verbose=0)
    print(f"  fit {time.perf_counter()-t:.1f} s, sum gaps {sum(timer.gaps):.1f} s")
    return timer.seconds_per_step(), hist.history["loss"][-1]

rng = np.random.default_rng(98)
x_tr, y_tr, _ = sensor_windows(rng, N_TRAIN)
x_ho, y_ho, rooms_ho = sensor_windows(rng, N_HELDOUT)
ds = tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(N_TRAIN, seed=98).repeat().batch(BATCH).prefetch(2)
report = HeldoutRoomReport(x_ho, y_ho, rooms_ho)
full_s, loss = train(ds, report)
emit({"steps_per_second": 1.0 / full_s})
wall = time.perf_counter() - T0
print(f"hygrorooms: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"evaluation {EVAL_SECONDS[0]:.1f} s of wall {wall:.1f} s = {100*EVAL_SECONDS[0]/wall:.1f}%")

if TRUTH:
    fixed = tf.data.Dataset.from_tensors((x_tr[:BATCH], y_tr[:BATCH])).repeat()
    comp_s, _ = train(fixed, report)
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"hygrorooms truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, evaluation {EVAL_SECONDS[0]:.1f} s of wall {wall:.1f} s "
          f"= {100*EVAL_SECONDS[0]/wall:.1f}%")
