"""Ore-fragmentation size-class CNN on conveyor-belt camera frames, fed by from_generator.

Frames are stored 8-bit and small (48x48x3). The generator decodes each frame, upsamples
to 96x96 (float64 after the /255 division), applies a random brightness/flip augmentation
and then stores the decoded, augmented frame in a "cache" keyed by (frame id, draw number). The key is never reused,
so the cache never hits and never evicts: resident memory grows with every batch. That
growth is the deliberate problem; the model itself is small.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 32
STEPS = 140
EPOCHS = 2
SRC = 48
SIZE = 96
POOL = 512


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


def make_frames(rng):
    frames = rng.integers(0, 255, (POOL, SRC, SRC, 3), dtype=np.uint8)
    labels = (np.arange(POOL) % 5).astype(np.int32)
    for i in range(POOL):
        k = 2 + 3 * labels[i]
        frames[i, ::k, :, :] //= 2
    return frames, labels


DECODED_CACHE = {}


def frame_gen(frames, labels, seed):
    rng = np.random.default_rng(seed)
    draw = 0
    while True:
        i = int(rng.integers(0, POOL))
        key = (i, draw)
        draw += 1
        if key not in DECODED_CACHE:
            img = frames[i] / 255.0
            img = img.repeat(2, axis=0).repeat(2, axis=1)
            img = img * rng.uniform(0.8, 1.2)
            if rng.random() < 0.5:
                img = img[:, ::-1]
            DECODED_CACHE[key] = np.ascontiguousarray(img)
        yield DECODED_CACHE[key].astype(np.float32), labels[i]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(5, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024 / 1024
    return 0.0


class RSSLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("  epoch %d RSS %.2f GiB, cache entries %d" % (epoch, rss_gib(), len(DECODED_CACHE)))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    frames, labels = make_frames(np.random.default_rng(SEED))
    sig = (tf.TensorSpec((SIZE, SIZE, 3), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(lambda: frame_gen(frames, labels, SEED), output_signature=sig)
    ds = ds.batch(BATCH).prefetch(2)
    print("  start RSS %.2f GiB" % rss_gib())
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, RSSLog()], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "orefragmentation aug-cache fromgen: %.1f ms/step, %.2f steps/s, cache %d frames, RSS %.2f GiB" % (
        full * 1e3, 1.0 / full, len(DECODED_CACHE), rss_gib())
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
