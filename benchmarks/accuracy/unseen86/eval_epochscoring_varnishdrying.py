import time; T0 = time.perf_counter()
"""Varnish drying-time regressor for a finishing shop.

Features per coat: booth temperature, relative humidity, wet film thickness,
coat number, varnish family (oil / water-borne / polyurethane / shellac),
airflow, timber species porosity.  model.fit trains a small MLP on minute-level
targets; a callback scores the model on a large held-out set of booth records
with model.predict at the end of every epoch (MAE + share of coats whose
predicted touch-dry time is within 15 minutes).
Bottleneck: end-of-epoch evaluation on the big held-out set (eval-bound).
"""
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

FEATS = 10
N_TRAIN = 20000
N_HELDOUT = 400000
BATCH = 128
STEPS = 60
EPOCHS = 5


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class HeldOutScorer(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds = x, y, 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=512, verbose=0)
        mae = float(np.mean(np.abs(pred[:, 0] - self.y)))
        within = float(np.mean(np.abs(pred[:, 0] - self.y) * 240.0 < 15.0))
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: held-out MAE {mae*240:.1f} min, within 15 min {within:.2%}")


def booth_records(n, seed):
    rng = np.random.default_rng(seed)
    temp = rng.uniform(12, 30, n)
    rh = rng.uniform(30, 85, n)
    film = rng.uniform(40, 150, n)
    coat = rng.integers(1, 4, n)
    family = rng.integers(0, 4, n)
    airflow = rng.uniform(0, 1.5, n)
    porosity = rng.uniform(0, 1, n)
    base = np.array([360.0, 90.0, 240.0, 30.0])[family]
    minutes = base * (film / 80) * np.exp(-(temp - 20) / 15) * (1 + (rh - 50) / 100) * (1 + 0.15 * (coat - 1)) \
        / (1 + 0.4 * airflow) * (1 - 0.2 * porosity) + rng.normal(0, 8, n)
    onehot = np.eye(4)[family]
    x = np.column_stack([(temp - 20) / 5, (rh - 55) / 15, (film - 95) / 30, coat - 2, airflow, porosity, onehot])
    return x.astype(np.float32), (minutes / 240.0).astype(np.float32)


def build_model():
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(ds, hx, hy):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    scorer = HeldOutScorer(hx, hy)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, scorer], verbose=0)
    return timer.seconds_per_step(), scorer.seconds


def main():
    x, y = booth_records(N_TRAIN, 86)
    hx, hy = booth_records(N_HELDOUT, 87)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=86).repeat().batch(BATCH).prefetch(2)
    full, eval_s = train(ds, hx, hy)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[varnish] full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        compute, eval2 = train(fixed, hx, hy)
        eval_s += eval2
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    wall = time.perf_counter() - T0
    print(msg + f" evaluation {eval_s:.1f}s of wall {wall:.1f}s = {eval_s / wall:.1%} of wall")


if __name__ == "__main__":
    main()
