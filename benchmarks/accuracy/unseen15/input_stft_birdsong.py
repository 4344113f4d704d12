"""Bird species recognition from raw 16 kHz field recordings (log-mel front end in tf.data).

Usage: python input_stft_birdsong.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

SAMPLE_RATE = 16000
CLIP_SECONDS = 5.0
N_CLIPS = 800
N_SPECIES = 12
FRAME_LENGTH = 2048
FRAME_STEP = 512
N_MELS = 40
BATCH_SIZE = 32
STEPS = 80
STEPS_PER_EXECUTION = 8
SEED = 5


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def synth_recordings(rng):
    n = int(SAMPLE_RATE * CLIP_SECONDS)
    t = np.arange(n, dtype=np.float32) / SAMPLE_RATE
    labels = rng.integers(0, N_SPECIES, size=N_CLIPS)
    clips = rng.normal(0, 0.05, size=(N_CLIPS, n)).astype(np.float32)
    for i, lab in enumerate(labels):
        f0 = 1500 + 350 * lab
        chirp = np.sin(2 * np.pi * (f0 + 400 * np.sin(2 * np.pi * 3 * t)) * t)
        gate = (np.sin(2 * np.pi * (2 + lab % 4) * t) > 0.3).astype(np.float32)
        clips[i] += 0.3 * chirp * gate
    return clips, labels.astype(np.int32)


MEL_MATRIX = tf.signal.linear_to_mel_weight_matrix(
    num_mel_bins=N_MELS,
    num_spectrogram_bins=FRAME_LENGTH // 2 + 1,
    sample_rate=SAMPLE_RATE,
    lower_edge_hertz=300.0,
    upper_edge_hertz=8000.0,
)


def to_logmel(audio, label):
    shift = tf.random.uniform([], -SAMPLE_RATE // 4, SAMPLE_RATE // 4, dtype=tf.int32)
    audio = tf.roll(audio, shift, axis=0)
    audio = audio * tf.random.uniform([], 0.7, 1.3)
    audio = audio + tf.random.normal(tf.shape(audio), stddev=0.01)
    stft = tf.signal.stft(audio, FRAME_LENGTH, FRAME_STEP, window_fn=tf.signal.hann_window)
    power = tf.math.square(tf.abs(stft))
    mel = tf.matmul(power, MEL_MATRIX)
    logmel = tf.math.log(mel + 1e-6)
    logmel = (logmel - tf.reduce_mean(logmel)) / (tf.math.reduce_std(logmel) + 1e-6)
    return logmel[..., tf.newaxis], label


def build_model(input_shape):
    inputs = keras.Input(shape=input_shape)
    x = layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inputs)
    for filters in (24, 32, 48):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(128, activation="relu")(x)
    outputs = layers.Dense(N_SPECIES)(x)
    model = keras.Model(inputs, outputs, name="birdnet_small")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model(dataset.element_spec[0].shape[1:])
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    clips, labels = synth_recordings(rng)
    print(f"{len(clips)} clips, {clips.nbytes / 1e6:.0f} MB of audio")

    ds = tf.data.Dataset.from_tensor_slices((clips, labels))
    ds = ds.shuffle(len(clips), seed=SEED).repeat()
    ds = ds.map(to_logmel)
    ds = ds.batch(BATCH_SIZE, drop_remainder=True)

    full = train(ds)
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
