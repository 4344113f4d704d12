import time; T0 = time.perf_counter()
"""Sea-lice camera photos: a tf.data pipeline maps tf.numpy_function (serial,
no parallel calls) that renders a raw underwater frame from the camera seed,
white-balances it, blurs it and builds a lice-spot mask channel in NumPy;
a small CNN counts adult female lice (regression) with model.fit."""
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
        return sum(g) / len(g)

BATCH = 16
STEPS = 60
EPOCHS = 3
H = W = 96
RAW = 192   # raw camera frame before downscale

def render_and_clean(seed):
    rng = np.random.default_rng(int(seed))
    yy, xx = np.mgrid[0:RAW, 0:RAW].astype(np.float32)
    # fish flank: silver gradient + scale texture + green water cast
    img = np.stack([0.35 + 0.2 * np.sin(xx / 7.0) * np.cos(yy / 5.0),
                    0.55 + 0.1 * np.sin(yy / 11.0),
                    0.50 + 0.05 * np.cos(xx / 13.0)], -1)
    n_lice = rng.integers(0, 9)
    for _ in range(n_lice):
        cy, cx = rng.uniform(10, RAW - 10, 2)
        r = rng.uniform(2.5, 5.0)
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
        img[..., 0] += 0.4 * blob; img[..., 1] -= 0.3 * blob; img[..., 2] -= 0.25 * blob
    img += rng.normal(0, 0.04, img.shape).astype(np.float32)
    # grey-world white balance
    img = img / (img.mean(axis=(0, 1), keepdims=True) + 1e-6) * 0.5
    # 5x5 box blur, done the straightforward way
    pad = np.pad(img, ((2, 2), (2, 2), (0, 0)), mode="edge")
    acc = np.zeros_like(img)
    for dy in range(5):
        for dx in range(5):
            acc += pad[dy:dy + RAW, dx:dx + RAW]
    img = acc / 25.0
    # redness mask for lice candidates
    red = img[..., 0] - 0.5 * (img[..., 1] + img[..., 2])
    mask = (red > np.percentile(red, 97)).astype(np.float32)
    img = np.concatenate([img, mask[..., None]], -1)
    small = img.reshape(H, 2, W, 2, 4).mean(axis=(1, 3))
    return small.astype(np.float32), np.float32(n_lice)

def load(seed):
    x, y = tf.numpy_function(render_and_clean, [seed], [tf.float32, tf.float32])
    x.set_shape((H, W, 4)); y.set_shape(())
    return x, y

def make_ds():
    return (tf.data.Dataset.range(10_000_000).map(load)
            .batch(BATCH).prefetch(1))

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((H, W, 4)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m

def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()

full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[seacagephotos] numpy_function map fit: {full*1000:.2f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[seacagephotos] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
