import time; T0 = time.perf_counter()
"""Hatchery tank schedules: the scheduling service starts up, imports
TensorFlow, checks the available devices, builds and compiles the two models
it serves (a tank-occupancy forecaster and a first-feeding start classifier)
and warms them with a single predict. It trains nothing and writes no
accuracy records."""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter()
devices = tf.config.list_physical_devices()
print("devices:", [d.device_type + ":" + d.name.split(":")[-1] for d in devices])

DAYS = 28              # schedule horizon
TANKS = 24             # start-feeding tanks in the hatchery hall

def occupancy_forecaster():
    inp = keras.Input((DAYS, 6), name="tank_history")      # temp, O2, flow, density, feed, mort
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(inp)
    x = keras.layers.LSTM(64, return_sequences=True)(x)
    x = keras.layers.LSTM(32)(x)
    out = keras.layers.Dense(TANKS, activation="sigmoid", name="occupied_next_week")(x)
    m = keras.Model(inp, out, name="occupancy_forecaster")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m

def first_feeding_classifier():
    egg = keras.Input((12,), name="degree_days_batch")
    tank = keras.Input((1,), dtype="int32", name="tank_id")
    e = keras.layers.Flatten()(keras.layers.Embedding(TANKS, 8)(tank))
    x = keras.layers.Concatenate()([egg, e])
    for units in (256, 128, 64):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
    out = keras.layers.Dense(3, activation="softmax", name="start_window")(x)
    m = keras.Model([egg, tank], out, name="first_feeding")
    m.compile(optimizer=keras.optimizers.Adam(3e-4), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
    return m

def transfer_planner():
    inp = keras.Input((DAYS, TANKS, 4), name="tank_grid")
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(TANKS, name="transfer_day")(x)
    m = keras.Model(inp, out, name="transfer_planner")
    m.compile(optimizer="rmsprop", loss="huber")
    return m

def larvae_counter():
    # tank-camera larvae counter: MobileNetV2 backbone built from scratch
    base = keras.applications.MobileNetV2(input_shape=(128, 128, 3), alpha=0.75,
                                          include_top=False, weights=None)
    x = keras.layers.GlobalAveragePooling2D()(base.output)
    out = keras.layers.Dense(1, activation="softplus", name="larvae_per_litre")(x)
    m = keras.Model(base.input, out, name="larvae_counter")
    m.compile(optimizer="adam", loss="mse")
    return m

def fry_size_estimator():
    # grading-table camera: fry length/weight from a top-down photo
    base = keras.applications.EfficientNetB0(input_shape=(160, 160, 3), include_top=False,
                                             weights=None)
    x = keras.layers.GlobalAveragePooling2D()(base.output)
    out = keras.layers.Dense(2, name="length_mm_weight_g")(x)
    m = keras.Model(base.input, out, name="fry_size_estimator")
    m.compile(optimizer="adam", loss="mae")
    return m

keras.utils.set_random_seed(93)
lc = larvae_counter()
fs = fry_size_estimator()
occ = occupancy_forecaster()
ff = first_feeding_classifier()
tp = transfer_planner()
rng = np.random.default_rng(93)
pred = occ.predict(rng.normal(size=(TANKS, DAYS, 6)).astype(np.float32), verbose=0)
ffp = ff.predict([rng.normal(size=(TANKS, 12)).astype(np.float32),
                  np.arange(TANKS, dtype=np.int32)[:, None]], verbose=0)
fsp = fs.predict(rng.random((2, 160, 160, 3)).astype(np.float32), verbose=0)
lcp = lc.predict(rng.random((2, 128, 128, 3)).astype(np.float32), verbose=0)
tpp = tp.predict(rng.normal(size=(4, DAYS, TANKS, 4)).astype(np.float32), verbose=0)
print(f"[hatcherytanks] startup only: import {T_IMPORT - T0:.1f}s, "
      f"params {occ.count_params() + ff.count_params() + tp.count_params() + lc.count_params() + fs.count_params()}, warm predict shapes {pred.shape} {ffp.shape} {tpp.shape}, "
      f"wall {time.perf_counter() - T0:.1f}s")
