import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

# ---- compute_deepconv_fit_yarnmicrographs: yarn cross-section micrographs held as
# in-memory float tensors, batched and prefetched by tf.data; a deep VGG-style CNN
# trained with model.fit dominates the step time.
BATCH = 32
STEPS = 50
EPOCHS = 3
SIZE = 32
N = 512


def make_images(seed=70):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    imgs = np.empty((N, SIZE, SIZE, 3), np.float32)
    labels = rng.integers(0, 5, N).astype(np.int32)
    for i in range(N):
        nfib = 10 + 8 * labels[i]
        img = np.zeros((SIZE, SIZE), np.float32)
        for cx, cy, r in zip(rng.uniform(0, 1, nfib), rng.uniform(0, 1, nfib), rng.uniform(0.03, 0.08, nfib)):
            img += ((xx - cx) ** 2 + (yy - cy) ** 2 < r * r)
        imgs[i] = np.clip(img, 0, 1)[..., None] * np.array([0.9, 0.85, 0.7]) + rng.normal(0, 0.05, (SIZE, SIZE, 3))
    return imgs, labels


X, Y = make_images()


def make_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(BATCH).prefetch(4)


def make_model():
    layers = [keras.Input((SIZE, SIZE, 3))]
    for ch in (16, 32, 48):
        layers += [keras.layers.Conv2D(ch, 3, padding="same", activation="relu"),
                   keras.layers.Conv2D(ch, 3, padding="same", activation="relu"),
                   keras.layers.MaxPooling2D()]
    layers += [keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(5)]
    m = keras.Sequential(layers)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    full = run(make_ds())
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[compute_deepconv_fit_yarnmicrographs] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[compute_deepconv_fit_yarnmicrographs] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
