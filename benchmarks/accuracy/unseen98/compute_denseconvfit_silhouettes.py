import time; T0 = time.perf_counter()
"""Folded-model photo silhouettes -> model family.  Silhouettes of finished
models (crane, frog, box, star ...) are rendered once into memory; model.fit
trains a convolutional classifier from tf.data.from_tensor_slices + prefetch."""
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

SIZE = 48
N_SAMPLES = 2048
FAMILIES = ["crane", "frog", "box", "star", "lily", "butterfly", "dragon", "kusudama"]
BATCH = 32
STEPS = 50
EPOCHS = 5

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
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

def render_silhouettes():
    """Vectorised polar-shape silhouettes: each family has its own lobe count."""
    rng = np.random.default_rng(98)
    yy, xx = np.mgrid[-1:1:SIZE * 1j, -1:1:SIZE * 1j]
    labels = rng.integers(0, len(FAMILIES), N_SAMPLES)
    lobes = (labels + 2)[:, None, None]
    rot = rng.uniform(0, 2 * np.pi, N_SAMPLES)[:, None, None]
    scale = rng.uniform(0.5, 0.85, N_SAMPLES)[:, None, None]
    theta = np.arctan2(yy, xx)[None] + rot
    r = np.hypot(xx, yy)[None]
    edge = scale * (0.7 + 0.3 * np.cos(lobes * theta))
    img = (r < edge).astype(np.float32)
    img += rng.normal(0, 0.1, img.shape).astype(np.float32)
    return img[..., None], labels.astype(np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((SIZE, SIZE, 1)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(128, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(len(FAMILIES)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    print(f"  fit {time.perf_counter()-t:.1f} s, sum gaps {sum(timer.gaps):.1f} s")
    return timer.seconds_per_step(), hist.history["loss"][-1]

images, labels = render_silhouettes()
ds = (tf.data.Dataset.from_tensor_slices((images, labels))
      .shuffle(N_SAMPLES, seed=98).repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))
full_s, loss = train(ds)
emit({"steps_per_second": 1.0 / full_s})
print(f"silhouettes: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    fixed = tf.data.Dataset.from_tensors((images[:BATCH], labels[:BATCH])).repeat()
    comp_s, _ = train(fixed)
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"silhouettes truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
