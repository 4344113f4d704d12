"""Cell-phenotype classification on microscopy crops with a small Vision
Transformer (patch embedding + MultiHeadAttention blocks). The crops are an
in-memory float32 array fed through a cached, prefetched tf.data pipeline, so
the transformer math dominates each step."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, IMG, PATCH, DIM, DEPTH, HEADS = 32, 40, 3, 64, 8, 96, 3, 4


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


class AddPosition(keras.layers.Layer):
    def build(self, shape):
        self.pos = self.add_weight(shape=(1, shape[1], shape[2]), initializer="random_normal")
    def call(self, x):
        return x + self.pos


def build_vit(n_classes=5):
    inp = keras.Input((IMG, IMG, 2))
    x = keras.layers.Conv2D(DIM, PATCH, strides=PATCH)(inp)            # patch embedding
    x = keras.layers.Reshape(((IMG // PATCH) ** 2, DIM))(x)
    x = AddPosition()(x)
    for _ in range(DEPTH):
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.MultiHeadAttention(HEADS, DIM // HEADS)(h, h)
        x = x + h
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.Dense(DIM * 4, activation="gelu")(h)
        x = x + keras.layers.Dense(DIM)(h)
    x = keras.layers.GlobalAveragePooling1D()(keras.layers.LayerNormalization()(x))
    return keras.Model(inp, keras.layers.Dense(n_classes)(x))


def make_crops(n, rng):
    yy, xx = np.mgrid[0:IMG, 0:IMG] / IMG
    labels = rng.integers(0, 5, size=n)
    cx, cy = rng.uniform(0.3, 0.7, size=(2, n))
    r = 0.1 + 0.04 * labels
    nucleus = np.exp(-(((xx[None] - cx[:, None, None]) ** 2 + (yy[None] - cy[:, None, None]) ** 2) / r[:, None, None] ** 2))
    membrane = np.abs(np.sin(8 * np.pi * xx[None] * (labels[:, None, None] + 1) / 5))
    crops = np.stack([nucleus, membrane], -1) + 0.1 * rng.normal(size=(n, IMG, IMG, 2))
    return crops.astype(np.float32), labels.astype(np.int32)


def train(data):
    keras.utils.set_random_seed(0)
    model = build_vit()
    model.compile(optimizer=keras.optimizers.AdamW(3e-4),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    crops, labels = make_crops(2048, np.random.default_rng(0))
    ds = (tf.data.Dataset.from_tensor_slices((crops, labels)).batch(BATCH, drop_remainder=True)
          .cache().shuffle(64).repeat().prefetch(tf.data.AUTOTUNE))
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"vit_fit_microscopy: {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
