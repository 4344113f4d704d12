"""Land-cover tile classifier: uint8 satellite tiles augmented with Keras
preprocessing layers (RandomRotation / RandomZoom / RandomContrast) inside a
serial tf.data map, one tile at a time, then batched into model.fit."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, TILE = 32, 80, 3, 96


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last, self.n = [], None, 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None and self.n >= 5:
            self.gaps.append(now - self.last)
        self.last = now; self.n += 1
    def sec_per_step(self):
        return float(np.mean(self.gaps))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_tiles(n, rng):
    # smooth "terrain" fields plus a class-dependent texture, stored as uint8
    base = rng.normal(size=(n, 12, 12, 3)).astype(np.float32)
    up = np.repeat(np.repeat(base, 8, axis=1), 8, axis=2)
    labels = rng.integers(0, 6, size=n)
    stripes = np.sin(np.arange(TILE)[None, :, None, None] * (labels[:, None, None, None] + 1) * 0.2)
    img = 128 + 40 * up + 30 * stripes
    return np.clip(img, 0, 255).astype(np.uint8), labels.astype(np.int32)


rot = keras.layers.RandomRotation(0.15, fill_mode="reflect", seed=1)
zoom = keras.layers.RandomZoom((-0.2, 0.1), seed=2)
contrast = keras.layers.RandomContrast(0.3, seed=3)


def augment(img, label):
    x = tf.cast(img, tf.float32)
    x = rot(x, training=True)
    x = zoom(x, training=True)
    x = contrast(x, training=True)
    x = tf.image.random_flip_left_right(x)
    return x / 255.0, label


def build_dataset(tiles, labels):
    ds = tf.data.Dataset.from_tensor_slices((tiles, labels)).shuffle(2048).repeat()
    ds = ds.map(augment)  # serial: one tile at a time through three KPL layers
    return ds.batch(BATCH).prefetch(1)


def build_model():
    return keras.Sequential([
        keras.Input((TILE, TILE, 3)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(6),
    ])


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tiles, labels = make_tiles(1500, np.random.default_rng(0))
    ds = build_dataset(tiles, labels)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"kpl_augment_satellite: {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
