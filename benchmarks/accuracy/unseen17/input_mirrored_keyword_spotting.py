"""Keyword spotting on log-spectrograms, custom loop under MirroredStrategy."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

SAMPLE_RATE = 16000
FRAME = 400
HOP = 160
N_FRAMES = 1 + (SAMPLE_RATE - FRAME) // HOP
N_BINS = 64
KEYWORDS = ["yes", "no", "up", "down", "left", "right", "stop", "go", "on", "off", "_noise"]

strategy = tf.distribute.MirroredStrategy()
print("replicas in sync:", strategy.num_replicas_in_sync)

_window = np.hanning(FRAME).astype(np.float32)
_fft_bins = FRAME // 2 + 1
_mel = np.abs(np.random.default_rng(0).normal(size=(_fft_bins, N_BINS))).astype(np.float32)


def synth_utterance(rng, label):
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    f0 = 180 + 35 * label
    wave = np.zeros(SAMPLE_RATE, np.float32)
    for h in range(1, 3):
        wave += np.sin(2 * np.pi * f0 * h * t * (1 + 0.05 * rng.standard_normal())) / h
    env = np.exp(-((t - rng.uniform(0.3, 0.7)) ** 2) / 0.02)
    wave = wave * env + rng.normal(0, 0.1, SAMPLE_RATE)
    return wave.astype(np.float32)


def augment(wave, rng):
    shift = int(rng.integers(-1600, 1600))
    wave = np.roll(wave, shift)
    wave = wave * rng.uniform(0.6, 1.4)
    background = rng.normal(0, rng.uniform(0.01, 0.2), wave.shape).astype(np.float32)
    return wave + background


def log_spectrogram(wave):
    frames = np.stack([wave[i * HOP : i * HOP + FRAME] * _window for i in range(N_FRAMES)])
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    spec = np.log(power @ _mel + 1e-6)
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return spec.astype(np.float32)[..., None]


def utterances():
    rng = np.random.default_rng(11)
    while True:
        label = int(rng.integers(len(KEYWORDS)))
        wave = augment(synth_utterance(rng, label), rng)
        yield log_spectrogram(wave), label


def build_dataset(global_batch):
    ds = tf.data.Dataset.from_generator(
        utterances,
        output_signature=(
            tf.TensorSpec((N_FRAMES, N_BINS, 1), tf.float32),
            tf.TensorSpec((), tf.int32),
        ),
    )
    return ds.batch(global_batch, drop_remainder=True)


def build_model():
    inp = keras.Input(shape=(N_FRAMES, N_BINS, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(len(KEYWORDS))(x)
    return keras.Model(inp, out)


def train(dataset, global_batch):
    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.Adam(1e-3)
        loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step_fn(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            per_example = loss_obj(y, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(dist_inputs):
        per_replica = strategy.run(step_fn, args=(dist_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    dist_ds = strategy.experimental_distribute_dataset(dataset)
    it = iter(dist_ds)
    stamps = []
    for step in range(args.steps):
        loss = train_step(next(it))
        loss_value = float(loss)
        stamps.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:4d} loss {loss_value:.4f}")
    return float(np.mean(np.diff(stamps)[4:]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    ds = build_dataset(global_batch)
    full = train(ds, global_batch)
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached, global_batch)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
