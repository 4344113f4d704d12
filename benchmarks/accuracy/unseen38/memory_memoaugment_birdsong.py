"""Bird-song species classifier with a memoised augmentation cache that leaks.

A Python generator builds augmented 1-second clips (time shift, gain, pink-ish
noise, random band-stop) and memoises each one in a dict keyed by
(epoch, index) "so the augmentation is reproducible".  Because the epoch is
part of the key, every epoch adds a fresh set of entries and the dict is never
cleared: resident memory grows steadily through training.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SR = 16000
N_CLIPS = 3072
N_SPECIES = 10
BATCH = 32
EPOCHS = 8
STEPS = N_CLIPS // BATCH

_AUG_CACHE = {}


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.gaps = []

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def make_bank(rng):
    labels = rng.integers(0, N_SPECIES, N_CLIPS).astype(np.int32)
    t = np.arange(SR, dtype=np.float32) / SR
    base_f = 1500 + 300 * np.arange(N_SPECIES)
    return labels, t, base_f


def synth(idx, labels, t, base_f):
    r = np.random.default_rng(idx)
    f = base_f[labels[idx]] * (1 + 0.02 * r.normal())
    chirp = np.sin(2 * np.pi * (f + 400 * np.sin(2 * np.pi * 3 * t)) * t)
    env = np.exp(-((t - r.uniform(0.2, 0.8)) ** 2) / 0.02)
    return (chirp * env).astype(np.float32)


def augment(clip, rng):
    clip = np.roll(clip, int(rng.integers(-2000, 2000)))
    clip = clip * rng.uniform(0.5, 1.5)
    noise = np.cumsum(rng.normal(0, 0.01, clip.shape)).astype(np.float32)
    return (clip + noise - noise.mean()).astype(np.float32)


def clip_stream(labels, t, base_f, seed):
    rng = np.random.default_rng(seed)
    epoch = 0
    while True:
        order = rng.permutation(N_CLIPS)
        for start in range(0, N_CLIPS - BATCH + 1, BATCH):
            xs = []
            for idx in order[start:start + BATCH]:
                key = (epoch, int(idx))
                if key not in _AUG_CACHE:
                    _AUG_CACHE[key] = augment(synth(idx, labels, t, base_f), rng)
                xs.append(_AUG_CACHE[key])
            yield np.stack(xs)[..., None], labels[order[start:start + BATCH]]
        epoch += 1


def build_model():
    model = keras.Sequential([
        keras.Input((SR, 1)),
        keras.layers.Conv1D(16, 64, strides=16, activation="relu"),
        keras.layers.MaxPooling1D(4),
        keras.layers.Conv1D(32, 9, activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(N_SPECIES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    labels, t, base_f = make_bank(np.random.default_rng(1))
    full, hist = train(clip_stream(labels, t, base_f, seed=2))
    report("steps_per_second", 1.0 / full)
    cached_mb = sum(v.nbytes for v in _AUG_CACHE.values()) / 2**20
    msg = (f"birdsong: {full * 1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}, "
           f"cache {len(_AUG_CACHE)} clips / {cached_mb:.0f} MiB")
    if args.truth:
        fixed = next(clip_stream(labels, t, base_f, seed=3))
        compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
