"""Bird-call classifier trained on log-mel spectrograms of short field recordings."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import scipy.io.wavfile
import tensorflow as tf
import keras

SAMPLE_RATE = 16000
CLIP_SECONDS = 3.0
N_CLASSES = 8
N_FILES = 480
BATCH_SIZE = 32
STEPS = 80
FRAME_LENGTH = 1024
FRAME_STEP = 64
N_MELS = 64


def write_recordings(root, rng):
    n = int(SAMPLE_RATE * CLIP_SECONDS)
    t = np.arange(n) / SAMPLE_RATE
    for i in range(N_FILES):
        cls = i % N_CLASSES
        f0 = 1500 + 400 * cls
        chirp = np.sin(2 * np.pi * (f0 + 300 * np.sin(2 * np.pi * (2 + cls) * t)) * t)
        env = np.exp(-((t - rng.uniform(0.5, 2.5)) ** 2) / 0.2)
        audio = 0.6 * chirp * env + 0.05 * rng.standard_normal(n)
        pcm = np.clip(audio * 32767, -32768, 32767).astype(np.int16)
        scipy.io.wavfile.write(
            os.path.join(root, f"site{i % 5}_c{cls}_{i:05d}.wav"), SAMPLE_RATE, pcm
        )


MEL_MATRIX = tf.signal.linear_to_mel_weight_matrix(
    N_MELS, FRAME_LENGTH // 2 + 1, SAMPLE_RATE, 300.0, 7800.0
)


def load_example(path):
    audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
    audio = tf.squeeze(audio, -1)
    spec = tf.abs(tf.signal.stft(audio, FRAME_LENGTH, FRAME_STEP))
    mel = tf.tensordot(spec, MEL_MATRIX, 1)
    logmel = tf.math.log(mel + 1e-6)
    logmel = (logmel - tf.reduce_mean(logmel)) / (tf.math.reduce_std(logmel) + 1e-6)
    name = tf.strings.split(path, os.sep)[-1]
    label = tf.strings.to_number(tf.strings.substr(tf.strings.split(name, "_")[1], 1, -1), tf.int32)
    return logmel[..., tf.newaxis], label


def build_model(input_shape):
    inp = keras.Input(shape=input_shape)
    x = keras.layers.Conv2D(16, 5, strides=(4, 2), padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inp, out)


def train(batches, input_shape):
    model = build_model(input_shape)
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step, (x, y) in enumerate(batches):
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 15 == 0:
            print(f"step {step:3d} loss {loss:.4f}")
        if step + 1 >= STEPS:
            break
    return float(np.mean(np.diff(times[4:]))), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    root = tempfile.mkdtemp(prefix="u18_input_wav_birdsong_")
    try:
        write_recordings(root, rng)
        files = tf.data.Dataset.list_files(os.path.join(root, "*.wav"), shuffle=True, seed=1)
        ds = files.map(load_example).batch(BATCH_SIZE, drop_remainder=True).repeat()
        input_shape = tuple(ds.element_spec[0].shape[1:])

        sec, loss = train(iter(ds), input_shape)
        print(f"real input: {sec * 1000:.1f} ms/step, final loss {loss:.4f}")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
        if args.truth:
            batch = next(iter(ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            csec, _ = train(iter(cached), input_shape)
            frac = min(1.0, max(0.0, (sec - csec) / sec))
            print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
