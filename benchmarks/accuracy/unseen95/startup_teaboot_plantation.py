"""Estate analytics bootstrap: import TensorFlow, list devices, build and
compile the leaf-grade CNN, MobileNetV2 and EfficientNetB0 leaf-grade
candidates (random init) and the cup-notes text model, run one predict per model on dummy inputs.
Trains nothing, writes nothing."""
import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter()
devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()


def leaf_grade_cnn():
    inp = keras.Input((96, 96, 3), name="leaf_photo")
    x = inp
    for f in (32, 64, 128, 128):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(5, activation="softmax", name="grade")(x)
    m = keras.Model(inp, out, name="leaf_grade_cnn")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def cup_notes_model():
    inp = keras.Input((120,), dtype="int32", name="note_tokens")
    x = keras.layers.Embedding(8000, 64)(inp)
    x = keras.layers.Bidirectional(keras.layers.LSTM(64, return_sequences=True))(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(4, name="briskness_body_colour_strength")(x)
    m = keras.Model(inp, out, name="cup_notes")
    m.compile(optimizer="adam", loss="mse")
    return m


def mobilenet_candidate():
    m = keras.applications.MobileNetV2(input_shape=(96, 96, 3), weights=None, classes=5, alpha=0.75)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def efficientnet_candidate():
    m = keras.applications.EfficientNetB0(input_shape=(128, 128, 3), weights=None, classes=5)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


cnn = leaf_grade_cnn()
mnet = mobilenet_candidate()
enet = efficientnet_candidate()
notes = cup_notes_model()
T_BUILD = time.perf_counter()
photos = np.random.default_rng(0).random((8, 96, 96, 3), dtype=np.float32)
probs = cnn.predict(photos, verbose=0)
mnet.predict(photos, verbose=0)
enet.predict(np.random.default_rng(2).random((8, 128, 128, 3), dtype=np.float32), verbose=0)
notes.predict(np.random.default_rng(1).integers(0, 8000, (8, 120)).astype(np.int32), verbose=0)
T_END = time.perf_counter()
print("[plantation] startup: import %.1f s, build+compile %.1f s, predict %.1f s, total %.1f s; "
      "%d physical / %d logical devices; params cnn=%d mobilenet=%d efficientnet=%d notes=%d; first grade %s"
      % (T_IMPORT - T0, T_BUILD - T_IMPORT, T_END - T_BUILD, T_END - T0, len(devices), len(logical),
         cnn.count_params(), mnet.count_params(), enet.count_params(), notes.count_params(), int(np.argmax(probs[0]))))
