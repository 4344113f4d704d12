# Arrhythmia classifier on 4-second single-lead ECG strips: a temporal convolutional network
# (stacked dilated causal Conv1D blocks with residuals) trained with model.fit on a tf.data
# pipeline built from the in-memory arrays, cached, shuffled and prefetched.
import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

RATE, SECONDS, CLASSES = 125, 4, 4
rng = np.random.default_rng(0)
t = np.arange(RATE * SECONDS) / RATE
rhythm = rng.integers(0, CLASSES, 4096)
beats = 1.0 + 0.3 * rhythm[:, None] + 0.05 * rng.standard_normal((4096, 1))
phase = (t[None, :] * beats + rng.random((4096, 1))) % 1.0
qrs = np.exp(-(((phase - 0.3) / 0.02) ** 2)) - 0.2 * np.exp(-(((phase - 0.55) / 0.06) ** 2))
strips = (qrs + 0.05 * rng.standard_normal(qrs.shape)).astype(np.float32)[..., None]


def dataset():
    ds = tf.data.Dataset.from_tensor_slices((strips, rhythm.astype(np.int32))).cache()
    return ds.shuffle(4096, seed=3).repeat().batch(32).prefetch(tf.data.AUTOTUNE)


def tcn_block(h, filters, dilation):
    shortcut = h
    h = keras.layers.Conv1D(filters, 5, dilation_rate=dilation, padding="causal")(h)
    h = keras.layers.Activation("relu")(keras.layers.LayerNormalization()(h))
    h = keras.layers.Conv1D(filters, 5, dilation_rate=dilation, padding="causal")(h)
    h = keras.layers.Activation("relu")(keras.layers.LayerNormalization()(h))
    if shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv1D(filters, 1)(shortcut)
    return keras.layers.Add()([h, shortcut])


inputs = keras.Input((RATE * SECONDS, 1))
h = inputs
for dilation in [1, 2, 4, 8, 16, 32]:
    h = tcn_block(h, 32, dilation)
h = keras.layers.GlobalAveragePooling1D()(h)
outputs = keras.layers.Dense(CLASSES)(h)
model = keras.Model(inputs, outputs, name="tcn")
model.compile(
    keras.optimizers.Adam(1e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 220)
measure(model, dataset, 25)
