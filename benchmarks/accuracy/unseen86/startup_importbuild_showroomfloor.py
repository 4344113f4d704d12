import time; T0 = time.perf_counter()
"""Showroom footfall service: cold start only.

The in-store footfall dashboard process imports TensorFlow, checks which
devices are visible, builds and compiles its two models (an hourly footfall
forecaster over door-counter sequences and a zone-conversion classifier),
warms the forecaster up with one predict over every showroom, and exits.  No training happens.
Bottleneck: process start-up (imports, device discovery, graph building).
"""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

HOURS = 168
ZONES = 12
SHOWROOMS = 512   # warm-up forecast for every showroom door counter


def footfall_forecaster():
    inp = keras.Input((HOURS, 3), name="door_counts")
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(inp)
    for units in (96, 64, 48):
        x = keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True))(x)
    att = keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(x, x)
    x = keras.layers.LayerNormalization()(x + att)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(24, name="next_day_hourly")(x)
    m = keras.Model(inp, out, name="footfall_forecaster")
    m.compile(optimizer="adam", loss="mse")
    return m


def zone_conversion():
    inp = keras.Input((ZONES * 4,), name="zone_dwell")
    x = keras.layers.Dense(128, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid", name="purchase")(x)
    m = keras.Model(inp, out, name="zone_conversion")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return m


def main():
    devices = tf.config.list_physical_devices()
    print("devices:", [d.device_type for d in devices])
    rng = np.random.default_rng(86)
    f = footfall_forecaster()
    z = zone_conversion()
    f.summary(print_fn=lambda *a, **k: None)
    pf = f.predict(rng.poisson(20, (SHOWROOMS, HOURS, 3)).astype(np.float32), verbose=0)
    z.summary(print_fn=lambda *a, **k: None)
    print(f"[showroom startup] forecaster {f.count_params()} params, conversion {z.count_params()} params, "
          f"warmup forecast shape {pf.shape}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
