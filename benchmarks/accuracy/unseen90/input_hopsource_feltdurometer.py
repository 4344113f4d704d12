import time; T0 = time.perf_counter()
"""Piano-hammer felt hardness grading, Python generator -> from_generator -> fit.

Each sample is one indentation test on a piano hammer: a durometer probe is
pressed into the felt crown and released, logging force vs. displacement at
1 kHz. The generator simulates the loading/unloading curve (non-linear felt
stiffening, hysteresis, stylus chatter), then computes per-test features in
NumPy (secant stiffness, hysteresis loop area, creep tail, a resampled curve).
The model grades the hammer (too soft / voice OK / needs needling / too hard).
No prefetch: the tf.data pipeline pulls samples from the generator on demand.
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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


N_POINTS = 600
BATCH = 64
STEPS_PER_EPOCH = 170
EPOCHS = 3
N_FEAT = 64 + 6


def indentation_test(rng):
    grade = int(rng.integers(0, 4))
    k = [0.6, 1.0, 1.5, 2.3][grade] * rng.uniform(0.85, 1.15)   # N/mm^n
    n_exp = rng.uniform(1.8, 2.6)                                   # felt stiffening
    depth = rng.uniform(1.5, 3.0)                                   # mm
    t = np.linspace(0.0, 1.0, N_POINTS)
    disp = depth * np.where(t < 0.5, 2 * t, 2 * (1 - t))
    load = k * disp ** n_exp
    unload = 0.7 * k * disp ** (n_exp + 0.4) * depth ** (-0.4)
    force = np.where(t < 0.5, load, unload)
    force += 0.02 * np.sin(2 * np.pi * 180 * t) * force.max()      # stylus chatter
    force += rng.normal(0, 0.01, N_POINTS)
    force = np.maximum.accumulate(force * (t < 0.5)) * (t < 0.5) + force * (t >= 0.5)
    # features
    half = N_POINTS // 2
    secant = force[half - 1] / depth
    area = np.trapezoid(force[:half], disp[:half]) - np.trapezoid(force[half:][::-1], disp[half:][::-1])
    tail = force[-60:].mean()
    grad = np.gradient(force, disp + 1e-3 * t)
    kernel = np.hanning(21); kernel /= kernel.sum()
    smooth = np.convolve(force, kernel, mode="same")
    curve = np.interp(np.linspace(0, 1, 64), t, smooth) / (force.max() + 1e-6)
    stats = np.array([secant, area, tail, np.median(grad), np.percentile(force, 90), depth])
    return np.concatenate([curve, np.log1p(np.abs(stats))]).astype(np.float32), grade


def felt_tests(seed):
    def gen():
        rng = np.random.default_rng(seed)
        while True:
            yield indentation_test(rng)
    return gen


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        felt_tests(seed),
        output_signature=(tf.TensorSpec((N_FEAT,), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


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


def build_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(ds):
    keras.utils.set_random_seed(3)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    sec, loss = train(make_dataset(1883))
    emit({"steps_per_second": 1.0 / sec})
    summary = f"feltdurometer from_generator fit: {EPOCHS}x{STEPS_PER_EPOCH} steps, {sec*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        batch = next(iter(make_dataset(5)))
        csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - csec) / sec, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(summary + f", total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
