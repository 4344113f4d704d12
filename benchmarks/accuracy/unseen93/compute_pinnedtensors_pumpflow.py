import time; T0 = time.perf_counter()
"""Pump flow meters: intake/outlet electromagnetic flow meter traces from a
recirculating hatchery system are windowed once into tensors held in memory;
a custom @tf.function GradientTape loop trains a 1-D conv net that flags
impeller wear from the flow/pressure signature."""
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

def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    g = gaps[5:] if len(gaps) > 5 else gaps
    return sum(g) / len(g)

BATCH = 32
N_BATCHES = 40
STEPS = 300
WIN = 256
CH = 4                 # intake flow, outlet flow, discharge pressure, motor current

rng = np.random.default_rng(93)
t = np.arange(WIN, dtype=np.float32) / 50.0
batches = []
for b in range(N_BATCHES):
    wear = rng.random(BATCH).astype(np.float32)
    f0 = rng.uniform(0.8, 1.6, BATCH)[:, None]
    sig = np.stack([
        120 + 5 * np.sin(2 * np.pi * f0 * t) + 3 * wear[:, None] * np.sin(2 * np.pi * 7 * f0 * t),
        118 + 5 * np.sin(2 * np.pi * f0 * t + 0.3),
        2.4 + 0.1 * np.cos(2 * np.pi * f0 * t) - 0.2 * wear[:, None],
        31 + wear[:, None] * rng.normal(0, 1.5, (BATCH, WIN)),
    ], -1) + rng.normal(0, 0.5, (BATCH, WIN, CH))
    sig = (sig - sig.mean(axis=(0, 1))) / (sig.std(axis=(0, 1)) + 1e-6)
    batches.append((tf.constant(sig.astype(np.float32)), tf.constant((wear > 0.6).astype(np.float32)[:, None])))

def build_model():
    keras.utils.set_random_seed(93)
    return keras.Sequential([
        keras.Input((WIN, CH)),
        keras.layers.Conv1D(64, 9, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 9, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(128, 9, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])

def train(fixed=None):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = fixed if fixed is not None else batches[i % N_BATCHES]
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss

full, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"[pumpflow] GradientTape over in-memory tensors: {full*1000:.2f} ms/step, loss {loss:.3f}, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    compute, _ = train(batches[0])
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[pumpflow] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
