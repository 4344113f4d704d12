import time; T0 = time.perf_counter()
"""Upholstery fabric swatch classifier (weave type) for a sofa retailer.

A keras.utils.PyDataset (workers=1) renders each batch of 48x48 RGB swatch
photos on the fly: it synthesises the weave (plain, twill, herringbone, velvet
pile, boucle), applies lighting, a random crop, a flip and a per-pixel colour
jitter in NumPy, then hands the batch to model.fit.
Bottleneck: per-image NumPy rendering/augmentation in __getitem__ (input-bound).
"""
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
RAW = 56
BATCH = 32
STEPS = 80
EPOCHS = 3
WEAVES = 5
FUZZ_PASSES = 32


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def render_swatch(rng, weave):
    yy, xx = np.mgrid[0:RAW, 0:RAW].astype(np.float32)
    freq = rng.uniform(0.6, 1.4)
    if weave == 0:      # plain weave
        g = np.sin(xx * freq) * np.sin(yy * freq)
    elif weave == 1:    # twill
        g = np.sin((xx + yy) * freq)
    elif weave == 2:    # herringbone
        g = np.sin((xx + np.abs((yy % 12) - 6)) * freq)
    elif weave == 3:    # velvet pile
        g = rng.normal(0, 1, (RAW, RAW)).astype(np.float32)
        for _ in range(3):
            g = (g + np.roll(g, 1, 0) + np.roll(g, 1, 1)) / 3.0
    else:               # boucle loops
        g = np.zeros((RAW, RAW), np.float32)
        for _ in range(40):
            cy, cx, r = rng.uniform(0, RAW), rng.uniform(0, RAW), rng.uniform(1.5, 3.5)
            g += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
    fuzz = rng.normal(0, 1, (RAW, RAW)).astype(np.float32)
    for _ in range(FUZZ_PASSES):   # loose fibres / pilling
        fuzz = (fuzz + np.roll(fuzz, 1, 0) + np.roll(fuzz, -1, 1)) / 3.0
    g = g + 0.3 * fuzz
    base = rng.uniform(0.2, 0.9, 3).astype(np.float32)
    light = 0.7 + 0.3 * (xx / RAW)
    img = (0.5 + 0.25 * g)[..., None] * base[None, None, :] * light[..., None]
    oy, ox = rng.integers(0, RAW - SIZE, 2)
    img = img[oy:oy + SIZE, ox:ox + SIZE]
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img = img * rng.uniform(0.9, 1.1, (SIZE, SIZE, 3)) + rng.normal(0, 0.02, (SIZE, SIZE, 3))
    return np.clip(img, 0, 1).astype(np.float32)


class SwatchBatches(keras.utils.PyDataset):
    def __init__(self, n_batches, seed=86, **kw):
        super().__init__(**kw)
        self.n_batches, self.seed = n_batches, seed

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        labels = rng.integers(0, WEAVES, BATCH)
        imgs = np.stack([render_swatch(rng, int(w)) for w in labels])
        return imgs, labels.astype(np.int32)


def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(WEAVES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def train(data):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = train(SwatchBatches(STEPS, workers=1, use_multiprocessing=False))
    emit({"steps_per_second": 1.0 / full})
    msg = f"[upholstery] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = SwatchBatches(STEPS)[0]
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
