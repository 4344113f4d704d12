import time; T0 = time.perf_counter()
# Detergent dosing pump logs from tunnel washers: each training batch is
# built in a Python loop by rendering raw controller log lines, parsing
# them back (split, float conversion, unit handling) and resampling into
# fixed windows, then fed to a custom @tf.function GradientTape step that
# regresses the over/under-dose in millilitres.
import os
import sys
import json
import math
import random

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


BATCH = 32
STEPS = 180
WIN = 128
CHANNELS = 6
CHEMS = ["alkali", "detergent", "bleach", "sour", "softener"]


def render_log(rnd, pump_id):
    """Raw controller log for one dosing pump over one wash cycle."""
    lines = []
    drift = rnd.uniform(-0.15, 0.15)
    t = 0.0
    for k in range(WIN * 2):
        t += rnd.uniform(0.4, 0.6)
        chem = CHEMS[(k // 40) % len(CHEMS)]
        rate = 12.0 + 4.0 * math.sin(k / 9.0) + rnd.gauss(0, 0.6)
        flow = rate * (1 + drift)
        press = 1.8 + 0.2 * math.cos(k / 13.0) + rnd.gauss(0, 0.05)
        temp = 42.0 + 0.05 * k + rnd.gauss(0, 0.3)
        cond = 3.1 + 0.002 * k * (chem == "alkali") + rnd.gauss(0, 0.02)
        lines.append(f"P{pump_id:02d},{t:.2f}s,{chem},rate={rate:.3f}ml/s,flow={flow:.3f}ml/s,"
                     f"p={press * 1000:.0f}mbar,T={temp:.2f}C,ec={cond:.3f}mS/cm,ok")
    return "\n".join(lines), drift


def parse_log(text):
    rows = []
    for line in text.split("\n"):
        f = line.split(",")
        t = float(f[1][:-1])
        rate = float(f[3].split("=")[1].replace("ml/s", ""))
        flow = float(f[4].split("=")[1].replace("ml/s", ""))
        press = float(f[5].split("=")[1].replace("mbar", "")) / 1000.0
        temp = float(f[6].split("=")[1].rstrip("C"))
        cond = float(f[7].split("=")[1].replace("mS/cm", ""))
        rows.append((t, rate, flow, press, temp, cond))
    # downsample pairs to WIN rows, normalise per channel
    out = []
    for i in range(0, len(rows), 2):
        a, b = rows[i], rows[i + 1]
        out.append([(a[j] + b[j]) / 2.0 for j in range(6)])
    arr = np.asarray(out, dtype=np.float32)
    arr[:, 0] = arr[:, 0] / arr[-1, 0]
    arr = (arr - arr.mean(0)) / (arr.std(0) + 1e-3)
    return arr


def pump_batch(rnd):
    xs, ys = [], []
    for j in range(BATCH):
        text, drift = render_log(rnd, j % 16)
        xs.append(parse_log(text))
        ys.append(drift * 250.0)  # over/under-dose in ml per cycle
    return np.stack(xs), np.asarray(ys, np.float32)[:, None]


def make_model():
    inp = keras.Input(shape=(WIN, CHANNELS))
    x = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(next_batch):
    keras.utils.set_random_seed(8)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


rnd = random.Random(1234)
full, last_loss = train(lambda: pump_batch(rnd))
emit({"steps_per_second": 1.0 / full})
print(f"[dosingpump] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, loss {last_loss:.3f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = pump_batch(random.Random(1234))
    compute, _ = train(lambda: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[dosingpump] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
