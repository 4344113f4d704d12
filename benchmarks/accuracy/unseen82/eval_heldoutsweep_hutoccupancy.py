import time; T0 = time.perf_counter()
"""Mountain hut occupancy -> tomorrow's bed occupancy rate (regression).

Training uses a modest in-memory sample of hut-nights. After every epoch a
callback scores the whole multi-season held-out archive (every hut, every
night, weather and booking features) with model.predict and reports the
mean absolute error, so evaluation dwarfs training. The callback runs in
both the normal and the --truth run.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 60
EPOCHS = 4
FEATS = 64
HELDOUT = 420_000
EVAL_SECONDS = [0.0]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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


class HeldOutSweep(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.maes = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=4096, verbose=0)
        self.maes.append(float(np.mean(np.abs(pred[:, 0] - self.y))))
        EVAL_SECONDS[0] += time.perf_counter() - t


def make_hut_nights(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATS)).astype(np.float32)
    # columns 0..3: weekend flag, forecast sun hours, snow depth, bookings on hand
    y = 1 / (1 + np.exp(-(0.8 * x[:, 0] + 0.6 * x[:, 1] - 0.3 * x[:, 2] + 1.2 * x[:, 3])))
    return x, y.astype(np.float32)


def build_model():
    keras.utils.set_random_seed(82)
    model = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def main():
    x, y = make_hut_nights(BATCH * STEPS, 82)
    hx, hy = make_hut_nights(HELDOUT, 83)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().prefetch(2)
    timer = StepTimer()
    sweep = HeldOutSweep(hx, hy)
    model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, sweep], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"hutoccupancy: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps, held-out MAE {sweep.maes[-1]:.4f}"
    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer, HeldOutSweep(hx, hy)], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    wall = time.perf_counter() - T0
    print(msg + f", evaluation {EVAL_SECONDS[0]:.1f} s of wall {wall:.1f} s = {100 * EVAL_SECONDS[0] / wall:.1f}%")


if __name__ == "__main__":
    main()
