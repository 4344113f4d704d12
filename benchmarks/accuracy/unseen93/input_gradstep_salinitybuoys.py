import time; T0 = time.perf_counter()
"""Salinity and temperature buoys: a Python loop assembles each batch from
CTD profiles (pure-Python conversion of conductivity to practical salinity
and a linearised seawater density per depth bin) and feeds a custom
@tf.function GradientTape step that predicts next-day surface temperature."""
import os, sys, json, math, random
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

def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    g = gaps[5:] if len(gaps) > 5 else gaps
    return sum(g) / len(g)

BATCH = 64
STEPS = 1000
DEPTHS = 40
NFEAT = DEPTHS * 4

def practical_salinity(c_ms_cm, t, p):
    # PSS-78 style polynomial (simplified, R_p = 1)
    a = (0.0080, -0.1692, 25.3851, 14.0941, -7.0261, 2.7081)
    b = (0.0005, -0.0056, -0.0066, -0.0375, 0.0636, -0.0144)
    rt = 0.6766097 + 2.00564e-2 * t + 1.104259e-4 * t * t - 6.9698e-7 * t ** 3
    R = c_ms_cm / 42.914
    Rt = R / rt
    sq = math.sqrt(max(Rt, 1e-9))
    s = sum(a[k] * sq ** k for k in range(6))
    ds = (t - 15) / (1 + 0.0162 * (t - 15)) * sum(b[k] * sq ** k for k in range(6))
    return s + ds

def profile(rng):
    surf_t = rng.uniform(5, 16); surf_c = rng.uniform(30, 42)
    rows = []
    for d in range(DEPTHS):
        z = d * 1.5
        t = surf_t - 0.08 * z + rng.gauss(0, 0.05)
        c = surf_c + 0.05 * z + rng.gauss(0, 0.08)
        p = z * 1.0197
        s = practical_salinity(c, t, p)
        rho = 1027.0 * (1 - 1.7e-4 * (t - 10) + 7.6e-4 * (s - 35))
        rows.extend([t, s, rho - 1000.0, p])
    return rows, surf_t + rng.gauss(0, 0.3)

def make_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        r, y = profile(rng)
        xs.append(r); ys.append(y)
    x = np.asarray(xs, dtype=np.float32)
    x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-3)
    return x, np.asarray(ys, dtype=np.float32)[:, None]

def build_model():
    keras.utils.set_random_seed(93)
    return keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(1),
    ])

def train(fixed=None):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = random.Random(93)
    stamps = []
    for i in range(STEPS):
        x, y = fixed if fixed is not None else make_batch(rng)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss

full, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"[salinitybuoys] GradientTape loop: {full*1000:.2f} ms/step, loss {loss:.3f}, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    fixed = make_batch(random.Random(7))
    compute, _ = train(fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[salinitybuoys] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
