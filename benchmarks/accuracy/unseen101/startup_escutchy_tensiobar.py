import time; T0 = time.perf_counter()
"""Locksmith shop preflight: import TensorFlow, list devices, build a few small models.

Builds and compiles several small Keras models used by the shop tools (key
blank matcher, pin depth regressor, dial noise filter, hinge wear scorer) and
runs one prediction through each.  Nothing is trained and nothing is written.
"""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

t_import = time.perf_counter() - T0
devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
print(f"tensorflow {tf.__version__}, keras {keras.__version__}, "
      f"{len(devices)} physical / {len(logical)} logical devices: {[d.name for d in devices]}")

rs = np.random.RandomState(1022)


def blank_matcher():
    return keras.Sequential([keras.Input((64,)), keras.layers.Dense(128, activation="relu"),
                             keras.layers.Dense(40, activation="softmax")], name="blank_matcher")


def pin_depth_regressor():
    inp = keras.Input((6, 10))
    h = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(6)(h), name="pin_depth_regressor")


def dial_noise_filter():
    return keras.Sequential([keras.Input((100, 1)), keras.layers.GRU(32),
                             keras.layers.Dense(1, activation="sigmoid")], name="dial_noise_filter")


def hinge_wear_scorer():
    return keras.Sequential([keras.Input((32, 32, 1)), keras.layers.Conv2D(16, 3, activation="relu"),
                             keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                             keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)],
                            name="hinge_wear_scorer")


def keyway_embedder():
    inp = keras.Input((12,), dtype="int32")
    h = keras.layers.Embedding(200, 16)(inp)
    h = keras.layers.Flatten()(h)
    return keras.Model(inp, keras.layers.Dense(8)(h), name="keyway_embedder")


def lever_sequence_lstm():
    return keras.Sequential([keras.Input((50, 8)), keras.layers.LSTM(64, return_sequences=True),
                             keras.layers.LSTM(32), keras.layers.Dense(4)], name="lever_sequence_lstm")


def safe_log_autoencoder():
    inp = keras.Input((128,))
    h = keras.layers.Dense(64, activation="relu")(inp)
    z = keras.layers.Dense(16, activation="relu")(h)
    h = keras.layers.Dense(64, activation="relu")(z)
    return keras.Model(inp, keras.layers.Dense(128)(h), name="safe_log_autoencoder")


def master_chart_attention():
    inp = keras.Input((24, 32))
    h = keras.layers.MultiHeadAttention(num_heads=4, key_dim=8)(inp, inp)
    h = keras.layers.LayerNormalization()(h + inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(5)(h), name="master_chart_attention")


def cylinder_bore_gru():
    return keras.Sequential([keras.Input((60, 4)), keras.layers.Bidirectional(keras.layers.GRU(24)),
                             keras.layers.Dense(2)], name="cylinder_bore_gru")


def key_photo_classifier():
    # shop photo triage of customer keys; randomly initialised, no weights downloaded
    return keras.applications.MobileNetV2(input_shape=(160, 160, 3), weights=None, classes=12)


def lockbox_photo_classifier():
    return keras.applications.EfficientNetB0(input_shape=(128, 128, 3), weights=None, classes=6)


builders = [blank_matcher, pin_depth_regressor, dial_noise_filter, hinge_wear_scorer, keyway_embedder,
            lever_sequence_lstm, safe_log_autoencoder, master_chart_attention, cylinder_bore_gru,
            key_photo_classifier, lockbox_photo_classifier]
for build in builders:
    t = time.perf_counter()
    m = build()
    m.compile(optimizer="adam", loss="mse")
    shape = (4,) + tuple(m.input_shape[1:])
    if m.inputs[0].dtype == "int32":
        sample = rs.randint(0, 200, shape).astype(np.int32)
    else:
        sample = rs.normal(0, 1, shape).astype(np.float32)
    out = m.predict(sample, verbose=0)
    print(f"  {m.name}: {m.count_params()} params, output {out.shape}, {time.perf_counter()-t:.2f}s")

print(f"startup_escutchy_tensiobar: import {t_import:.1f}s, {len(builders)} models, "
      f"wall {time.perf_counter()-T0:.1f}s")
