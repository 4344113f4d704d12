"""Seismic event classifier: log-spectrogram CNN trained with a whole-epoch tf.function."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TRACES = 1024
TRACE_LEN = 24000
N_CLASSES = 4
BATCH_SIZE = 32
STEPS_PER_EPOCH = 20
EPOCHS = 4
FRAME_LEN = 256
FRAME_STEP = 16

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(7)
t = np.arange(TRACE_LEN, dtype=np.float32) / 100.0
labels = rng.integers(0, N_CLASSES, size=N_TRACES).astype(np.int32)
freqs = (1.5 + labels * 2.0).astype(np.float32)
traces = np.sin(2 * np.pi * freqs[:, None] * t[None, :]) * np.exp(-0.05 * t[None, :])
traces = (traces + 0.5 * rng.standard_normal((N_TRACES, TRACE_LEN))).astype(np.float32)

mel = tf.signal.linear_to_mel_weight_matrix(
    num_mel_bins=64,
    num_spectrogram_bins=FRAME_LEN // 2 + 1,
    sample_rate=100.0,
    lower_edge_hertz=0.5,
    upper_edge_hertz=45.0,
)


def to_spectrogram(trace, label):
    trace = trace - tf.reduce_mean(trace)
    trace = trace / (tf.math.reduce_std(trace) + 1e-6)
    stft = tf.signal.stft(trace, frame_length=FRAME_LEN, frame_step=FRAME_STEP)
    power = tf.abs(stft) ** 2
    melspec = tf.math.log(tf.tensordot(power, mel, 1) + 1e-6)
    img = melspec[..., None]
    img = tf.image.resize(img, [96, 64], method="bicubic")
    img = tf.image.per_image_standardization(img)
    img = tf.image.random_flip_left_right(img)
    return img, label


dataset = (
    tf.data.Dataset.from_tensor_slices((traces, labels))
    .shuffle(N_TRACES)
    .repeat()
    .map(to_spectrogram)
    .batch(BATCH_SIZE, drop_remainder=True)
    .prefetch(2)
)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((96, 64, 1))
    x = inp
    for filters in (12, 24, 48):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inp, out)


loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train(ds, tag):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    it = iter(ds)

    @tf.function
    def train_epoch():
        total = tf.constant(0.0)
        for _ in tf.range(STEPS_PER_EPOCH):
            x, y = next(it)
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
        return total / tf.cast(STEPS_PER_EPOCH, tf.float32)

    epoch_times = []
    for epoch in range(EPOCHS):
        start = time.perf_counter()
        loss = float(train_epoch())
        epoch_times.append(time.perf_counter() - start)
        print(f"[{tag}] epoch {epoch + 1}/{EPOCHS} loss={loss:.4f} time={epoch_times[-1]:.2f}s")
    return float(np.mean(epoch_times[1:])) / STEPS_PER_EPOCH


full = train(dataset, "spectrogram")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    x0, y0 = next(iter(dataset))
    cached = tf.data.Dataset.from_tensors((x0, y0)).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
