import time; T0 = time.perf_counter()
"""Glue-free tessellation tiles -> tiling symmetry group.  Tile scans are rendered
once into a list of pre-built batch tensors; a custom @tf.function GradientTape
loop trains a wide MLP over them (no input work inside the loop)."""
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

SIZE = 32
GROUPS = ["p1", "p2", "pm", "pg", "cm", "p4", "p4m", "p3", "p6", "p6m"]
BATCH = 128
N_BATCHES = 24
STEPS = 750

def render_tiles(rng, n):
    labels = rng.integers(0, len(GROUPS), n)
    yy, xx = np.mgrid[0:1:SIZE * 1j, 0:1:SIZE * 1j]
    order = np.array([1, 2, 2, 2, 2, 4, 4, 3, 6, 6])[labels][:, None, None]
    freq = rng.uniform(2, 5, n)[:, None, None]
    ang = np.arctan2(yy - 0.5, xx - 0.5)[None]
    img = np.cos(freq * 2 * np.pi * xx[None]) * np.cos(freq * 2 * np.pi * yy[None]) + np.cos(order * ang)
    img += rng.normal(0, 0.2, img.shape)
    return img.reshape(n, SIZE * SIZE).astype(np.float32), labels.astype(np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    return keras.Sequential([
        keras.Input((SIZE * SIZE,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(len(GROUPS)),
    ])

def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss

rng = np.random.default_rng(98)
batches = []
for _ in range(N_BATCHES):
    x, y = render_tiles(rng, BATCH)
    batches.append((tf.constant(x), tf.constant(y)))
full_s, loss = train(batches)
emit({"steps_per_second": 1.0 / full_s})
print(f"tilemosaics: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    one = batches[0]
    comp_s, _ = train([one])
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"tilemosaics truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
