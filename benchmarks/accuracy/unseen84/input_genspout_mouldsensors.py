import time; T0 = time.perf_counter()
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
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

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
        return mean_after_warmup(self.gaps)


# Injection-moulding press sensors: each shot is a cycle of cavity pressure,
# melt temperature, screw position and clamp force sampled at 160 points.
# A Python generator simulates each shot and runs the plant's per-shot
# cleaning recipe (EMA smoothing, peak/hold detection) before yielding it.
CYCLE_LEN = 160
CHANNELS = 4
BATCH = 64
STEPS = 100
EPOCHS = 4
CLEAN_PASSES = 2


def clean_shot(raw):
    out = np.empty_like(raw)
    for c in range(CHANNELS):
        col = raw[:, c].tolist()
        for _ in range(CLEAN_PASSES):
            ema = col[0]
            sm = []
            for v in col:
                ema = 0.8 * ema + 0.2 * v
                sm.append(ema)
            col = sm
        peak = max(col)
        hold = sum(1 for v in col if v > 0.9 * peak)
        out[:, c] = np.asarray(col, dtype=np.float32) / (abs(peak) + 1e-3)
        out[0, c] = hold / CYCLE_LEN
    return out


def shot_generator(seed):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, CYCLE_LEN, dtype=np.float32)
    while True:
        fill = rng.uniform(0.2, 0.4)
        pressure = np.clip(t / fill, 0, 1) * rng.uniform(80, 120) * np.exp(-np.clip(t - fill, 0, None) * 3)
        temp = 220 + rng.normal(0, 4) + 10 * np.sin(6.28 * t)
        screw = 1.0 - np.clip(t / (fill + 0.1), 0, 1)
        clamp = rng.uniform(300, 400) * np.ones_like(t)
        raw = np.stack([pressure, temp, screw, clamp], axis=1).astype(np.float32)
        raw += rng.normal(0, 1.0, raw.shape).astype(np.float32)
        short_shot = float(fill > 0.33 and pressure.max() < 100)
        yield clean_shot(raw), np.float32(short_shot)


def make_model():
    inp = keras.Input((CYCLE_LEN, CHANNELS))
    x = keras.layers.Conv1D(48, 5, activation="relu", padding="same")(inp)
    x = keras.layers.Conv1D(48, 5, activation="relu", padding="same")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    sig = (tf.TensorSpec((CYCLE_LEN, CHANNELS), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.from_generator(lambda: shot_generator(11), output_signature=sig).batch(BATCH)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"mouldsensors: {full * 1000:.1f} ms/step, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"mouldsensors truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
