# A keyword-spotting model: tf.data.Dataset.from_generator over a Python generator that
# synthesises each one-second clip and computes its log spectrogram with NumPy.
import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

RATE, FRAME, HOP = 16000, 512, 160
window = np.hanning(FRAME).astype(np.float32)


def clips():
    rng = np.random.default_rng(0)
    t = np.arange(RATE, dtype=np.float32) / RATE
    while True:
        label = int(rng.integers(12))
        tones = 200.0 + 150.0 * label + rng.normal(0, 20, 3)
        audio = sum(np.sin(2 * np.pi * f * t) for f in tones) + rng.normal(0, 0.3, RATE)
        starts = np.arange(0, RATE - FRAME, HOP)
        frames = np.stack([audio[s : s + FRAME] for s in starts]) * window
        spectrogram = np.log(np.abs(np.fft.rfft(frames, axis=1)) ** 2 + 1e-6)
        yield spectrogram.astype(np.float32), label


def dataset():
    signature = (
        tf.TensorSpec((97, FRAME // 2 + 1), tf.float32),
        tf.TensorSpec((), tf.int32),
    )
    return tf.data.Dataset.from_generator(clips, output_signature=signature).batch(32)


model = keras.Sequential(
    [
        keras.Input((97, FRAME // 2 + 1)),
        keras.layers.Conv1D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(12),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 150)
measure(model, dataset, 12)
