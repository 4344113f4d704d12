import time; T0 = time.perf_counter()
# Solvent still distillation records (perchloroethylene / hydrocarbon
# recovery): this service only starts up, checks devices, builds and
# compiles the two models it would serve (still-cycle quality regressor and
# sight-glass camera classifier), warms one predict, and exits.
# It trains nothing and writes nothing to ACCURACY_OUT.
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter() - T0

devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
print("[solventstill] devices:", [d.name for d in devices], "logical:", len(logical))

N_SENSORS = 14  # boiler temp, vapour temp, condenser in/out, vacuum, water separator, ...
GLASS_PX = 224


def quality_model():
    inp = keras.Input(shape=(N_SENSORS * 8,), name="cycle_summary")
    x = inp
    for width in (512, 512, 256, 256, 128, 128, 64):
        x = keras.layers.Dense(width, activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.Dropout(0.1)(x)
    purity = keras.layers.Dense(1, activation="sigmoid", name="solvent_purity")(x)
    acid = keras.layers.Dense(1, name="acid_acceptance")(x)
    m = keras.Model(inp, [purity, acid], name="still_quality")
    m.compile(optimizer=keras.optimizers.AdamW(1e-3),
              loss={"solvent_purity": "binary_crossentropy", "acid_acceptance": "mse"},
              metrics={"solvent_purity": ["AUC"], "acid_acceptance": ["mae"]})
    return m


def sightglass_model():
    """Camera on the still's sight glass: clear / cloudy / foaming distillate."""
    backbone = keras.applications.ResNet50(weights=None, include_top=False,
                                           input_shape=(GLASS_PX, GLASS_PX, 3), pooling="avg")
    out = keras.layers.Dense(3, activation="softmax", name="distillate_state")(backbone.output)
    m = keras.Model(backbone.input, out, name="sightglass")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


t1 = time.perf_counter()
qm = quality_model()
sm = sightglass_model()
t_build = time.perf_counter() - t1

rng = np.random.default_rng(92)
t2 = time.perf_counter()
warm = sm.predict(rng.uniform(size=(16, GLASS_PX, GLASS_PX, 3)).astype(np.float32), verbose=0)
t_predict = time.perf_counter() - t2

print(f"[solventstill] import {T_IMPORT:.1f}s, build+compile {t_build:.1f}s "
      f"({qm.count_params() + sm.count_params()} params), warm predict {t_predict:.1f}s, "
      f"wall {time.perf_counter()-T0:.1f}s")
