import time; T0 = time.perf_counter()
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

# Winery analytics service boot: import TensorFlow, probe devices, then build and
# compile the models the cellar dashboard serves (a grape-cluster ripeness CNN
# and a fermentation-curve GRU, plus a MobileNetV2 bottle-label reader and an
# EfficientNetB0 leaf-disease net built from the architecture only) and warm three
# of them up with a single predict. No training,
# nothing is written to ACCURACY_OUT.
T_IMPORT = time.perf_counter() - T0

devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
print("devices:", [d.name for d in devices], "logical:", len(logical))


def ripeness_cnn():
    inp = keras.Input((128, 128, 3), name="cluster_photo")
    x = keras.layers.Rescaling(1.0 / 255)(inp)
    for f in (32, 64, 128, 128):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(3, activation="softmax", name="ripeness")(x)
    m = keras.Model(inp, out, name="ripeness_cnn")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def fermentation_gru():
    inp = keras.Input((240, 4), name="tank_log")
    x = keras.layers.GRU(64, return_sequences=True)(inp)
    x = keras.layers.GRU(32)(x)
    out = keras.layers.Dense(1, activation="sigmoid", name="stuck_risk")(x)
    m = keras.Model(inp, out, name="fermentation_gru")
    m.compile(optimizer=keras.optimizers.RMSprop(1e-3), loss="binary_crossentropy")
    return m


def label_reader():
    # bottle-label / vineyard-block reader, architecture only (no downloaded weights)
    m = keras.applications.MobileNetV2(input_shape=(160, 160, 3), weights=None, classes=40)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def leaf_disease_net():
    # downy / powdery mildew leaf classifier, architecture only (no downloaded weights)
    m = keras.applications.EfficientNetB0(input_shape=(128, 128, 3), weights=None, classes=4)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


keras.utils.set_random_seed(94)
cnn = ripeness_cnn()
leaf = leaf_disease_net()
gru = fermentation_gru()
labels = label_reader()
T_BUILD = time.perf_counter() - T0
rng = np.random.default_rng(94)
probs = cnn.predict(rng.integers(0, 255, (8, 128, 128, 3)).astype(np.float32), verbose=0)
risk = gru.predict(rng.normal(size=(4, 240, 4)).astype(np.float32), verbose=0)
label_ids = labels.predict(rng.uniform(-1, 1, (2, 160, 160, 3)).astype(np.float32), verbose=0).argmax(1)
print("wineryboot: import %.1f s, build+compile %.1f s, wall %.1f s, params %d + %d + %d + %d, first ripeness %s, risk %.3f, label ids %s"
      % (T_IMPORT, T_BUILD - T_IMPORT, time.perf_counter() - T0, cnn.count_params(),
         gru.count_params(), labels.count_params(), leaf.count_params(), probs[0].round(3).tolist(), float(risk[0, 0]),
         label_ids.tolist()))
