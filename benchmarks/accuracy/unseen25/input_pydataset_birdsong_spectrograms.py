"""Bird-call species classifier on log spectrograms computed on the fly."""

import argparse
import json
import os
import time

import numpy as np
import scipy.signal
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--clips", type=int, default=2000)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

SR = 16_000
CLIP = SR
N_SPECIES = 12
NPERSEG = 256
BANDPASS = scipy.signal.butter(8, [800, 7000], btype="bandpass", fs=SR, output="sos")

# ---------------------------------------------------------------- data
rng = np.random.default_rng(21)
species = rng.integers(0, N_SPECIES, size=args.clips).astype(np.int32)
tt = np.arange(CLIP) / SR
clips = np.empty((args.clips, CLIP), np.float32)
for i, s in enumerate(species):
    f0 = 1500 + 250 * s
    chirp = np.sin(2 * np.pi * (f0 + 400 * np.sin(2 * np.pi * (2 + s % 4) * tt)) * tt)
    clips[i] = 0.6 * chirp + 0.4 * rng.standard_normal(CLIP)


class BirdCalls(keras.utils.PyDataset):
    def __init__(self, clips, labels, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.clips, self.labels, self.batch_size = clips, labels, batch_size

    def __len__(self):
        return len(self.clips) // self.batch_size

    def __getitem__(self, idx):
        specs = []
        for i in range(idx * self.batch_size, (idx + 1) * self.batch_size):
            wave = self.clips[i]
            wave = scipy.signal.lfilter([1.0, -0.97], [1.0], wave)  # pre-emphasis
            wave = scipy.signal.sosfilt(BANDPASS, wave)
            _, _, sxx = scipy.signal.spectrogram(
                wave, fs=SR, window="hann", nperseg=NPERSEG, noverlap=3 * NPERSEG // 4
            )
            sxx = np.log(sxx + 1e-8)
            sxx = (sxx - sxx.mean()) / (sxx.std() + 1e-6)
            specs.append(sxx[..., None].astype(np.float32))
        return np.stack(specs), self.labels[idx * self.batch_size : (idx + 1) * self.batch_size]


train_data = BirdCalls(clips, species, args.batch_size, workers=1, use_multiprocessing=False)
spec_shape = train_data[0][0].shape[1:]
print("spectrogram shape", spec_shape)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(spec_shape)
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(N_SPECIES)(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(data, steps_per_epoch=None):
    model = build_model()
    timer = StepTimer()
    model.fit(
        data, epochs=args.epochs, steps_per_epoch=steps_per_epoch, callbacks=[timer], verbose=2
    )
    return timer.seconds_per_step()


full = train(train_data)
report("steps_per_second", 1.0 / full)
summary = f"birdsong: {len(train_data)} steps/epoch, {full * 1000:.1f} ms/step"

if args.truth:
    xb, yb = train_data[0]
    cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    compute = train(cached, steps_per_epoch=len(train_data))
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)
