import time; T0 = time.perf_counter()
# Water hardness readings from the softener inlet of a laundry (conductivity,
# pH, Ca/Mg ion-selective electrodes, flow, temperature over a day) -> hardness
# in ppm CaCO3 and resin regeneration flag. All batches are pre-built as
# tensors; a custom @tf.function GradientTape step with a wide residual MLP
# does the work.
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
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


BATCH = 192
STEPS = 260
N_BATCHES = 24
HOURS = 96  # 15-minute readings over a day
CH = 6

rng = np.random.default_rng(9092)
batches = []
for b in range(N_BATCHES):
    base = rng.uniform(50, 400, size=(BATCH, 1))
    tod = np.linspace(0, 2 * np.pi, HOURS)[None, :]
    ca = base * 0.7 * (1 + 0.1 * np.sin(tod)) + rng.normal(0, 5, (BATCH, HOURS))
    mg = base * 0.3 + rng.normal(0, 3, (BATCH, HOURS))
    cond = 0.0018 * (ca + mg) + rng.normal(0, 0.02, (BATCH, HOURS))
    ph = 7.4 + 0.002 * base + rng.normal(0, 0.05, (BATCH, HOURS))
    flow = np.abs(rng.normal(20, 8, (BATCH, HOURS)))
    temp = 12 + 3 * np.sin(tod) + rng.normal(0, 0.3, (BATCH, HOURS))
    x = np.stack([ca / 300, mg / 150, cond, ph - 7, flow / 40, temp / 20], -1).reshape(BATCH, -1)
    y = np.concatenate([base / 100, (base > 250).astype(np.float64)], 1)
    batches.append((tf.constant(x, tf.float32), tf.constant(y, tf.float32)))


def make_model():
    inp = keras.Input(shape=(HOURS * CH,))
    x = keras.layers.Dense(512, activation="gelu")(inp)
    for _ in range(3):
        y = keras.layers.Dense(1024, activation="gelu")(x)
        y = keras.layers.Dense(512)(y)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, y]))
    out = keras.layers.Dense(2)(x)
    return keras.Model(inp, out)


def train(get_batch):
    keras.utils.set_random_seed(6)
    model = make_model()
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            p = model(x, training=True)
            loss = (tf.reduce_mean(tf.square(p[:, 0] - y[:, 0]))
                    + tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(y[:, 1], p[:, 1])))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


full, last_loss = train(lambda s: batches[s % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print(f"[waterhardness] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, loss {last_loss:.3f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = batches[0]
    compute, _ = train(lambda s: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[waterhardness] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
