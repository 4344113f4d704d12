"""Textile inspection: classify woven-fabric patches as defect-free or carrying a weave
defect (broken pick, slub). Patches are synthesised in memory; a serial tf.data map wraps a
tf.numpy_function that filters each patch with an 8-orientation Gabor filter bank
(FFT convolution in numpy) and stacks the magnitude responses as channels for model.fit."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, SIZE, BATCH, STEPS, EPOCHS, N_IMG = 48, 64, 16, 100, 3, 1200
N_ORIENT = 8


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_fabric(n):
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    imgs = np.empty((n, SIZE, SIZE), np.float32)
    labels = np.zeros((n,), np.int32)
    for i in range(n):
        f1, f2 = rng.uniform(0.25, 0.35), rng.uniform(0.25, 0.35)
        img = np.sin(f1 * xx + rng.uniform(0, 6)) * np.sin(f2 * yy + rng.uniform(0, 6))
        img += 0.3 * rng.standard_normal((SIZE, SIZE))
        if i % 2:
            r = rng.integers(8, SIZE - 8)
            img[r:r + 2, :] = rng.uniform(-1.5, 1.5)
            labels[i] = 1
        imgs[i] = img
    return imgs, labels


def gabor_kernel(theta, freq=0.3, sigma=3.0, k=15):
    half = k // 2
    y, x = np.mgrid[-half:half + 1, -half:half + 1].astype(np.float64)
    xr = x * np.cos(theta) + y * np.sin(theta)
    yr = -x * np.sin(theta) + y * np.cos(theta)
    return np.exp(-(xr ** 2 + yr ** 2) / (2 * sigma ** 2)) * np.exp(1j * 2 * np.pi * freq * xr)


_BANK = None


def filter_bank():
    global _BANK
    if _BANK is None:
        pad = 2 * SIZE
        _BANK = [[(np.fft.fft2(gabor_kernel(np.pi * o / N_ORIENT, freq=0.9 / s, sigma=s), s=(pad, pad)), 7)
                  for s in (2.5, 4.0)] for o in range(N_ORIENT)]
    return _BANK


def gabor_features(img):
    out = np.zeros((SIZE, SIZE, N_ORIENT), np.float32)
    pad = 2 * SIZE
    F = np.fft.fft2(img.astype(np.float64), s=(pad, pad))
    for o, scales in enumerate(filter_bank()):
        for K, h in scales:
            mag = np.abs(np.fft.ifft2(F * K)[h:h + SIZE, h:h + SIZE])
            out[:, :, o] = np.maximum(out[:, :, o], mag)
    out /= out.max() + 1e-6
    return out


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((SIZE, SIZE, N_ORIENT)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(2, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_gaborbank_numpyfn_fabricdefects_")
    try:
        imgs, labels = make_fabric(N_IMG)

        def to_features(img, label):
            feats = tf.numpy_function(gabor_features, [img], tf.float32)
            feats.set_shape((SIZE, SIZE, N_ORIENT))
            return feats, label

        ds = (tf.data.Dataset.from_tensor_slices((imgs, labels))
              .shuffle(N_IMG, seed=SEED).repeat()
              .map(to_features)
              .batch(BATCH).prefetch(1))
        model = build_model()
        timer = StepTimer()
        hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        main_wall = time.perf_counter() - T0
        msg = f"gabor fabric: acc={hist.history['accuracy'][-1]:.3f} step={full*1000:.1f}ms main_wall={main_wall:.1f}s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            t2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
