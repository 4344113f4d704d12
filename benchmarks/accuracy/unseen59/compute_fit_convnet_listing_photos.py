"""Real estate: classify listing photos by room type (compute-bound).

Data path: 512 synthetic 32x32 RGB photo thumbnails generated once with numpy and held
in memory; tf.data.Dataset.from_tensor_slices -> cache -> shuffle -> repeat
-> batch -> prefetch -> model.fit. The input pipeline is trivial; the
VGG-style conv net dominates each step.
Bottleneck: model compute.
"""
import time
WALL0 = time.perf_counter()
import json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N, S = 32, 60, 2, 512, 32


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_data():
    rng = np.random.default_rng(59)
    y = rng.integers(0, 6, N).astype(np.int32)
    yy, xx = np.mgrid[0:S, 0:S] / float(S)
    x = rng.normal(0.5, 0.1, (N, S, S, 3)).astype(np.float32)
    for i in range(N):  # room types differ in dominant stripe frequency / colour
        x[i, ..., y[i] % 3] += 0.3 * np.sin(xx * (y[i] + 2) * 6.0 + yy * 3.0).astype(np.float32)
    return x, y


def make_ds(x, y):
    return (tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N, seed=59)
            .repeat().batch(BATCH).prefetch(2))


def build():
    keras.utils.set_random_seed(59)
    L = keras.layers
    m = keras.Sequential([keras.Input((S, S, 3)),
                          L.Conv2D(16, 3, activation="relu", padding="same"), L.Conv2D(16, 3, activation="relu", padding="same"), L.MaxPooling2D(),
                          L.Conv2D(32, 3, activation="relu", padding="same"), L.Conv2D(32, 3, activation="relu", padding="same"), L.MaxPooling2D(),
                          L.Conv2D(48, 3, activation="relu", padding="same"), L.GlobalAveragePooling2D(),
                          L.Dense(128, activation="relu"), L.Dense(6)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    timer = StepTimer()
    build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    x, y = make_data()
    full = run(make_ds(x, y))
    emit({"steps_per_second": 1.0 / full})
    print("compute_fit_convnet_listing_photos: %.4f s/step (%.1f steps/s), wall %.1f s" % (full, 1 / full, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        batch = next(iter(make_ds(x, y)))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
