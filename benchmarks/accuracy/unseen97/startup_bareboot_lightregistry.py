import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

# Light registry service start-up: the nightly job that (re)builds the two models used
# by the coastal light registry -- a light-characteristic classifier for light-list
# entries and a lantern-outage forecaster -- lists devices, builds and compiles both,
# and does one smoke-test predict.  It trains nothing and writes nothing.

devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
t_import = time.perf_counter() - T0


N_BLOCKS = 20  # transformer-style encoder blocks over the photometer sweep


def characteristic_classifier():
    keras.utils.set_random_seed(9)
    inp = keras.Input((128, 6), name="photometer_sweep")
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Bidirectional(keras.layers.LSTM(64, return_sequences=True))(x)
    for _ in range(N_BLOCKS):
        a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, a]))
        f = keras.layers.Conv1D(256, 3, padding="same", activation="gelu")(x)
        f = keras.layers.Conv1D(128, 1)(f)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, f]))
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(12, activation="softmax", name="characteristic")(x)
    m = keras.Model(inp, out, name="light_characteristic")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def outage_forecaster():
    keras.utils.set_random_seed(10)
    tele = keras.Input((144, 4), name="battery_telemetry")
    meta = keras.Input((16,), name="station_meta")
    x = keras.layers.GRU(64)(tele)
    h = keras.layers.Concatenate()([x, keras.layers.Dense(32, activation="relu")(meta)])
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid", name="outage_48h")(h)
    m = keras.Model([tele, meta], out, name="outage_forecaster")
    m.compile(optimizer=keras.optimizers.RMSprop(1e-3), loss="binary_crossentropy", metrics=["AUC"])
    return m


clf = characteristic_classifier()
fc = outage_forecaster()
rng = np.random.default_rng(97)
probe = rng.normal(size=(4, 128, 6)).astype(np.float32)
pred = clf.predict(probe, verbose=0)
print(f"[lightregistry] devices={[d.device_type for d in devices]} logical={len(logical)} "
      f"import+devices {t_import:.1f} s, params clf={clf.count_params()} fc={fc.count_params()}, "
      f"smoke predict argmax={pred.argmax(axis=1).tolist()}, wall {time.perf_counter()-T0:.1f} s")
