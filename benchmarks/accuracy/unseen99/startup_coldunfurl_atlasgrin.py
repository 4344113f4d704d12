import time; T0 = time.perf_counter()
"""Atlas toolkit warm-up: import TensorFlow, list devices, build models.

Loads the six models an atlas production toolkit would keep ready (legend
tile CNN, gazetteer name embedding, GPS track GRU, contour MLP,
tide-curve LSTM, map-sheet attention block), compiles
them and runs one prediction each on synthetic inputs.  Nothing is trained.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

t_import = time.perf_counter() - T0
devices = tf.config.list_physical_devices()
keras.utils.set_random_seed(1)


def legend_cnn():
    return keras.Sequential([
        keras.Input((64, 64, 3)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(12),
    ])


def gazetteer_embed():
    return keras.Sequential([
        keras.Input((24,), dtype="int32"),
        keras.layers.Embedding(5000, 64),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(8),
    ])


def track_gru():
    return keras.Sequential([
        keras.Input((120, 4)),
        keras.layers.GRU(64),
        keras.layers.Dense(4),
    ])


def contour_mlp():
    inp = keras.Input((32,))
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(256, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


def tide_lstm():
    return keras.Sequential([
        keras.Input((336, 2)),
        keras.layers.LSTM(96, return_sequences=True),
        keras.layers.LSTM(48),
        keras.layers.Dense(3),
    ])


def sheet_attention():
    inp = keras.Input((64, 32))
    h = keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(inp, inp)
    h = keras.layers.LayerNormalization()(h + inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(5)(h))


rs = np.random.RandomState(0)
inputs = {
    "legend_cnn": rs.rand(256, 64, 64, 3).astype(np.float32),
    "gazetteer_embed": rs.randint(0, 5000, (16, 24)).astype(np.int32),
    "track_gru": rs.rand(16, 120, 4).astype(np.float32),
    "contour_mlp": rs.rand(16, 32).astype(np.float32),
    "tide_lstm": rs.rand(512, 336, 2).astype(np.float32),
    "sheet_attention": rs.rand(512, 64, 32).astype(np.float32),
}
shapes = {}
for name, make in [("legend_cnn", legend_cnn), ("gazetteer_embed", gazetteer_embed),
                   ("track_gru", track_gru), ("contour_mlp", contour_mlp),
                   ("tide_lstm", tide_lstm), ("sheet_attention", sheet_attention)]:
    model = make()
    model.compile(optimizer="adam", loss="mse")
    shapes[name] = model.predict(inputs[name], verbose=0).shape

print(f"atlasgrin: import {t_import:.1f} s, {len(devices)} device(s) "
      f"{[d.device_type for d in devices]}, models {shapes}, wall {time.perf_counter() - T0:.1f} s")
