import time
_WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Film scene classification from short compressed clips. A Python generator
# (tf.data.Dataset.from_generator) inflates each zlib-compressed uint8 clip,
# converts it to float32 and applies a random crop offset. It also stores
# every decoded float clip in a "decode cache" keyed by (clip, crop offset);
# because the offset is random, the cache never hits and only grows, so the
# process RSS climbs by roughly 1 MB per example throughout training.
# ---------------------------------------------------------------------------
import zlib

SEED = 60
N_CLIPS = 256
FRAMES = 20
H = W = 64
N_SCENES = 8
BATCH = 16
STEPS = 60
EPOCHS = 2


def make_clip(rng, scene):
    yy, xx = np.mgrid[0:H + 8, 0:W + 8]
    frames = []
    for f in range(FRAMES):
        r = (np.sin((xx + f * (scene + 1)) / (4 + scene)) * 100 + 128)
        g = (np.cos((yy - f) / (3 + scene)) * 80 + 128)
        b = np.full_like(r, 40 * (scene % 4) + 30)
        frames.append(np.stack([r, g, b], -1))
    clip = (np.stack(frames) + rng.normal(0, 4, (FRAMES, H + 8, W + 8, 3))).clip(0, 255).astype(np.uint8)
    return zlib.compress(clip.tobytes(), 1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FRAMES, H, W, 3))
    h = keras.layers.Lambda(lambda v: tf.reduce_mean(v, axis=1))(inp)
    h = keras.layers.Conv2D(16, 3, strides=2, activation="relu")(h)
    h = keras.layers.Conv2D(32, 3, strides=2, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(N_SCENES, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, N_SCENES, N_CLIPS).astype(np.int32)
    clips = [make_clip(rng, int(s)) for s in labels]
    decode_cache = {}
    crop_rng = np.random.default_rng(SEED + 1)

    def decode(j):
        dy, dx = (int(v) for v in crop_rng.integers(0, 9, 2))
        key = (j, dy, dx, len(decode_cache))       # never repeats -> cache never hits
        if key not in decode_cache:
            raw = np.frombuffer(zlib.decompress(clips[j]), np.uint8).reshape(FRAMES, H + 8, W + 8, 3)
            decode_cache[key] = (raw[:, dy:dy + H, dx:dx + W].astype(np.float32) / 255.0)
        return decode_cache[key]

    def gen():
        i = 0
        while True:
            j = i % N_CLIPS
            yield decode(j), labels[j]
            i += 1

    sig = (tf.TensorSpec((FRAMES, H, W, 3), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)

    class CacheProbe(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            mb = sum(v.nbytes for v in decode_cache.values()) / 2 ** 20
            print(f"  epoch {epoch}: decode cache {len(decode_cache)} clips, {mb:.0f} MiB")

    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, CacheProbe()], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[memory_decodedframecache_fromgen_filmscenes] full run: {full*1000:.1f} ms/step, "
          f"cache {len(decode_cache)} clips")
    if args.truth:
        xb = np.stack([decode(j) for j in range(BATCH)])
        one = tf.data.Dataset.from_tensors((xb, labels[:BATCH])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = sec_per_step(timer2.gaps)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[memory_decodedframecache_fromgen_filmscenes] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
