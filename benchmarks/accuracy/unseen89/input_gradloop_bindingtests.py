"""Ski-binding release tests: each batch of bench tests is simulated in Python
(DIN lookup from skier weight/height/age/boot sole, twist-release torque trace,
release-point search loop) and fed to a custom @tf.function GradientTape step."""
import time; T0 = time.perf_counter()
import os
import sys
import json
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


TRACE = 400
FEAT = 12 + TRACE // 4
BATCH = 128
STEPS = 300
EPOCHS = 4
WEIGHT_ROWS = [(13, 0), (17, 1), (21, 2), (25, 3), (30, 4), (35, 5), (41, 6), (48, 7), (57, 8), (66, 9), (78, 10), (94, 11), (999, 12)]
DIN_TABLE = [0.75, 1.0, 1.5, 1.75, 2.25, 2.75, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 10.0, 11.5]


def din_setting(weight, height, age, sole, skier_type):
    code = next(c for w, c in WEIGHT_ROWS if weight <= w)
    if height > 157:
        code = max(code, 8 if height <= 166 else (9 if height <= 178 else (10 if height <= 194 else 11)))
    code += skier_type - 1
    if age >= 50 or age < 10:
        code -= 1
    col = 0 if sole <= 250 else (1 if sole <= 270 else (2 if sole <= 290 else (3 if sole <= 310 else 4)))
    code = min(max(code, 0), len(DIN_TABLE) - 1)
    return DIN_TABLE[code] * (1.0 - 0.04 * col)


def bench_batch(rng):
    xs = np.zeros((BATCH, FEAT), np.float32)
    ys = np.zeros((BATCH, 1), np.float32)
    for b in range(BATCH):
        weight = float(rng.uniform(25, 110))
        height = float(rng.uniform(120, 200))
        age = int(rng.integers(6, 75))
        sole = float(rng.uniform(230, 340))
        stype = int(rng.integers(1, 4))
        din = din_setting(weight, height, age, sole, stype)
        spring = din * float(rng.uniform(0.8, 1.2))
        torque = np.cumsum(np.abs(rng.normal(spring * 0.9, 1.5, TRACE))).tolist()
        release_at = TRACE - 1
        peak = 0.0
        for i, tq in enumerate(torque):          # release-point search
            peak = max(peak, tq)
            if tq > spring * 10.0 * 9.0 and i > 3 and torque[i] - torque[i - 3] < spring * 2.5:
                release_at = i
                break
        curve = [0.0] * (TRACE // 4)
        for i in range(0, TRACE, 4):
            curve[i // 4] = sum(torque[i:i + 4]) / (4.0 * 1000.0)
        xs[b, :12] = [weight / 110, height / 200, age / 75, sole / 340, stype / 3, din / 12,
                      spring / 12, release_at / TRACE, peak / 1000.0, float(release_at < TRACE - 1),
                      (peak / (spring * 90.0 + 1e-6)) / 3.0, float(age >= 50)]
        xs[b, 12:] = curve
        ys[b, 0] = 1.0 if abs(spring - din) / din < 0.1 else 0.0
    return xs, ys


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out, name="release_within_tolerance")


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    t = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = next_batch()
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), time.perf_counter() - t, loss


def main():
    rng = np.random.default_rng(89)
    full, loop_s, loss = train(lambda: bench_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print("bindingtests normal: %.4f s/step, loop %.1f s, loss %.3f, wall %.1f s" % (full, loop_s, loss, time.perf_counter() - T0))
    if TRUTH:
        xb, yb = bench_batch(np.random.default_rng(7))
        comp, _, _ = train(lambda: (xb, yb))
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("bindingtests truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
