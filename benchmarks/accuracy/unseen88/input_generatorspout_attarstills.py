"""Steam-distillation logs from rose/vetiver attar stills -> oil-yield grade.

Each distillation run is stored as a text log (one line per 30 s reading,
key=value pairs).  A Python generator parses the text, derives smoothed
yield-rate features and feeds model.fit through tf.data.Dataset.from_generator.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


BATCH, STEPS, EPOCHS, T = 32, 220, 3, 128
N_RUNS = 500
FIELDS = ("t_min", "still_temp_c", "steam_bar", "condensate_ml_min", "oil_ml", "cond_temp_c")


def make_logs(n, seed=88):
    rng = np.random.default_rng(seed)
    logs, grades = [], []
    t = np.arange(T) * 0.5
    for _ in range(n):
        temp = 96 + 4 * (1 - np.exp(-t / 8)) + rng.normal(0, 0.3, T)
        steam = 1.1 + 0.1 * rng.standard_normal() + rng.normal(0, 0.02, T)
        cond = 3 + rng.normal(0, 0.2, T)
        rate = rng.uniform(0.01, 0.06)
        oil = np.cumsum(np.abs(rate * np.exp(-t / rng.uniform(15, 40)) + rng.normal(0, 0.003, T)))
        ctemp = 28 + rng.normal(0, 0.5, T)
        rows = np.stack([t, temp, steam, cond, oil, ctemp], 1)
        lines = [",".join(f"{k}={v:.4f}" for k, v in zip(FIELDS, row)) for row in rows]
        logs.append("\n".join(lines))
        grades.append(int(min(oil[-1] // 0.5, 4)))
    return logs, np.array(grades, np.int32)


def parse_log(text):
    rows = []
    for line in text.split("\n"):
        rec = {}
        for field in line.split(","):
            key, val = field.split("=")
            rec[key] = float(val)
        rows.append([rec[f] for f in FIELDS])
    a = np.asarray(rows, np.float32)
    d_oil = np.diff(a[:, 4], prepend=a[0, 4])
    smooth = np.convolve(d_oil, np.ones(5) / 5, mode="same")
    accel = np.gradient(smooth)
    feats = np.column_stack([(a[:, 1] - 98) / 3, (a[:, 2] - 1.1) / 0.1, (a[:, 3] - 3) / 0.3,
                             a[:, 4] / 3, smooth * 20, accel * 200, (a[:, 5] - 28)])
    return feats.astype(np.float32)


LOGS, GRADES = make_logs(N_RUNS)


def distillation_batches(seed=0):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, N_RUNS, BATCH)
        x = np.stack([parse_log(LOGS[i]) for i in idx])
        yield x, GRADES[idx]


SIG = (tf.TensorSpec((None, T, 7), tf.float32), tf.TensorSpec((None,), tf.int32))


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((T, 7))
    h = layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    h = layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = layers.MaxPooling1D(2)(h)
    h = layers.Conv1D(96, 3, padding="same", activation="relu")(h)
    h = layers.GlobalAveragePooling1D()(h)
    h = layers.Dense(64, activation="relu")(h)
    out = layers.Dense(5)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


ds = tf.data.Dataset.from_generator(distillation_batches, output_signature=SIG)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[attarstills] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = next(distillation_batches(seed=1))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[attarstills] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
