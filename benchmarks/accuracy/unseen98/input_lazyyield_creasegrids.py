import time; T0 = time.perf_counter()
"""Crease-pattern diagram classifier: a Python generator rasterises synthetic
mountain/valley crease patterns one diagram at a time and feeds model.fit via
tf.data.Dataset.from_generator."""
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

GRID = 48          # raster size of one crease-pattern diagram
SEGMENTS = (30, 55)  # creases per diagram
BATCH = 64
STEPS = 50
EPOCHS = 5
N_CLASSES = 4

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

def draw_crease_pattern(rng):
    """Rasterise one crease pattern: channel 0 mountain folds, channel 1 valley folds."""
    img = np.zeros((GRID, GRID, 2), np.float32)
    n = int(rng.integers(*SEGMENTS))
    # creases snap to a 22.5-degree-style reference grid of 16 divisions
    ends = rng.integers(0, 16, size=(n, 4)) * (GRID - 1) / 15.0
    mountain = valley = 0
    center_m = center_v = 0
    for k in range(n):
        x0, y0, x1, y1 = ends[k]
        kind = 0 if rng.random() < 0.5 else 1
        length = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        xs = np.rint(np.linspace(x0, x1, length)).astype(np.int64)
        ys = np.rint(np.linspace(y0, y1, length)).astype(np.int64)
        img[ys, xs, kind] = 1.0
        # dashed valley lines, dash-dot mountain lines as drawn on diagrams
        if kind == 1:
            img[ys[::3], xs[::3], 1] = 0.5
        else:
            img[ys[::4], xs[::4], 0] = 0.75
        if kind == 0:
            mountain += 1
        else:
            valley += 1
        mid = GRID // 2
        if min(x0, x1) <= mid <= max(x0, x1) and min(y0, y1) <= mid <= max(y0, y1):
            if kind == 0:
                center_m += 1
            else:
                center_v += 1
    # paper texture noise and a light blur of the ink
    img += rng.normal(0.0, 0.05, size=img.shape).astype(np.float32)
    img = 0.5 * img + 0.125 * (np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1) + np.roll(img, -1, 1))
    # Maekawa-style label: mountain/valley excess at the centre vertex
    label = (center_m - center_v) % N_CLASSES
    return img, np.int32(label)

def crease_generator(seed):
    rng = np.random.default_rng(seed)
    while True:
        yield draw_crease_pattern(rng)

def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: crease_generator(seed),
        output_signature=(tf.TensorSpec((GRID, GRID, 2), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((GRID, GRID, 2)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(N_CLASSES),
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

full_s, loss = train(make_dataset(seed=98))
emit({"steps_per_second": 1.0 / full_s})
print(f"creasegrids: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next(iter(make_dataset(seed=7)))
    fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    comp_s, _ = train(fixed)
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"creasegrids truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
