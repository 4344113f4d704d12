"""Airline crew-rostering service preflight: before the nightly scheduling job, the service
imports TensorFlow, lists the visible devices, builds and compiles its four scoring models
(fatigue-risk MLP, pairing-sequence GRU, disruption-propagation conv net, ops-note attention encoder) and runs one
smoke prediction on a zero batch each. No data is loaded and nothing is trained."""
import time
T0 = time.perf_counter()
import os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras


def fatigue_mlp():
    inp = keras.Input((48,), name="duty_features")
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(128, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid", name="fatigue_risk")(h), name="fatigue_mlp")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return m


def pairing_gru():
    inp = keras.Input((24, 32), name="legs")
    h = keras.layers.GRU(128, return_sequences=True)(inp)
    h = keras.layers.GRU(64)(h)
    m = keras.Model(inp, keras.layers.Dense(12, activation="softmax", name="pairing_class")(h), name="pairing_gru")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def disruption_cnn():
    inp = keras.Input((64, 64, 6), name="network_grid")
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    m = keras.Model(inp, keras.layers.Dense(1, name="delay_minutes")(h), name="disruption_cnn")
    m.compile(optimizer="adam", loss="huber")
    return m


def notes_encoder():
    inp = keras.Input((64,), dtype="int32", name="ops_note_tokens")
    h = keras.layers.Embedding(8000, 64)(inp)
    h = keras.layers.MultiHeadAttention(4, 16)(h, h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    m = keras.Model(inp, keras.layers.Dense(5, activation="softmax", name="irregularity")(h), name="notes_encoder")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u48_startup_pilotroster_heads_preflight_airline_")
    try:
        devices = tf.config.list_physical_devices()
        logical = tf.config.list_logical_devices()
        keras.utils.set_random_seed(48)
        report = []
        for builder, shape in ((fatigue_mlp, (8, 48)), (pairing_gru, (8, 24, 32)), (disruption_cnn, (8, 64, 64, 6)), (notes_encoder, (8, 64))):
            m = builder()
            out = m.predict(np.zeros(shape, m.inputs[0].dtype), verbose=0)
            single = m.predict(np.zeros((1,) + shape[1:], m.inputs[0].dtype), verbose=0)  # online path, batch of one
            assert single.shape[1:] == out.shape[1:]
            report.append(f"{m.name}:{m.count_params()}p->{out.shape}")
        print(f"preflight ok: devices={[d.device_type for d in devices]} logical={len(logical)} "
              f"{' '.join(report)} wall={time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
