"""Bird-call species classifier on log-mel spectrogram clips stored as one .npy per clip."""

import argparse
import json
import math
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--batch-size", type=int, default=48)
parser.add_argument("--clips", type=int, default=2400)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_MELS = 64
FRAMES = 96
NUM_SPECIES = 20


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def export_clips(folder, n):
    rng = np.random.default_rng(11)
    labels = rng.integers(0, NUM_SPECIES, n)
    for i in range(n):
        spec = rng.gamma(2.0, 1.0, (N_MELS, FRAMES)).astype(np.float32)
        band = 2 + 3 * labels[i]
        spec[band : band + 3] += 6.0
        np.save(os.path.join(folder, f"clip_{i:05d}.npy"), spec)
    np.save(os.path.join(folder, "labels.npy"), labels)
    return labels


class SpectrogramClips(keras.utils.PyDataset):
    def __init__(self, folder, labels, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.folder = folder
        self.labels = labels
        self.batch_size = batch_size
        self.order = np.random.default_rng(0).permutation(len(labels))

    def __len__(self):
        return math.floor(len(self.labels) / self.batch_size)

    def __getitem__(self, idx):
        ids = self.order[idx * self.batch_size : (idx + 1) * self.batch_size]
        xs = []
        for i in ids:
            spec = np.load(os.path.join(self.folder, f"clip_{i:05d}.npy"))
            # per-channel energy normalisation, frame by frame
            smooth = spec[:, 0].copy()
            for f in range(spec.shape[1]):
                smooth = 0.975 * smooth + 0.025 * spec[:, f]
                spec[:, f] = (spec[:, f] / (1e-6 + smooth) ** 0.98 + 2.0) ** 0.5 - 2.0**0.5
            spec = np.log1p(spec)
            lo, hi = np.percentile(spec, [1, 99])
            spec = np.clip(spec, lo, hi)
            spec = (spec - spec.mean(axis=1, keepdims=True)) / (
                spec.std(axis=1, keepdims=True) + 1e-5
            )
            xs.append(spec[..., None])
        return np.stack(xs).astype(np.float32), self.labels[ids]

    def on_epoch_end(self):
        np.random.default_rng().shuffle(self.order)


def build_model():
    inputs = keras.Input((N_MELS, FRAMES, 1))
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inputs)
    x = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.2)(x)
    outputs = layers.Dense(NUM_SPECIES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(data, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=args.epochs, steps_per_epoch=steps, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


workdir = tempfile.mkdtemp(prefix="u21_input_pydataset_birdsong_")
try:
    labels = export_clips(workdir, args.clips)
    clips = SpectrogramClips(workdir, labels, args.batch_size, workers=1, use_multiprocessing=False)
    full = train(clips)
    print(f"npy clips: {full * 1000:.1f} ms/step")
    report("steps_per_second", 1.0 / full)

    if args.truth:
        fixed_x, fixed_y = clips[0]
        fixed = tf.data.Dataset.from_tensors((fixed_x, fixed_y)).repeat()
        compute = train(fixed, steps=len(clips))
        frac = min(1.0, max(0.0, (full - compute) / full))
        report("truth_input_fraction", frac)
        print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")
    print(f"done: {args.epochs} epochs x {len(clips)} steps, {1.0 / full:.1f} steps/s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
