"""Ski-patrol dispatch service warm-up: imports TensorFlow, lists devices,
builds and compiles the incident-triage and radio-call models, runs one
predict as a smoke test. Trains nothing, writes nothing to ACCURACY_OUT."""
import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def triage_model():
    inp = keras.Input((40,), name="incident_features")
    x = inp
    for i, w in enumerate([256, 256, 128, 128, 64]):
        x = keras.layers.Dense(w, activation="relu", name="triage_dense_%d" % i)(x)
        x = keras.layers.BatchNormalization(name="triage_bn_%d" % i)(x)
    out = keras.layers.Dense(5, activation="softmax", name="priority")(x)
    m = keras.Model(inp, out, name="incident_triage")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def radio_model():
    inp = keras.Input((400, 1), name="radio_envelope")
    x = inp
    for i, ch in enumerate([32, 64, 64, 128, 128, 128]):
        x = keras.layers.Conv1D(ch, 5, padding="same", activation="relu", name="radio_conv_%d" % i)(x)
        if i % 2:
            x = keras.layers.MaxPooling1D(2, name="radio_pool_%d" % i)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(8, activation="softmax", name="call_type")(x)
    m = keras.Model(inp, out, name="radio_call")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    phys = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    t1 = time.perf_counter()
    triage = triage_model()
    radio = radio_model()
    rng = np.random.default_rng(89)
    probs = radio.predict(rng.normal(size=(12288, 400, 1)).astype(np.float32), batch_size=128, verbose=0)
    t2 = time.perf_counter()
    print("skipatrol startup: %d physical / %d logical devices, params %d + %d, predict mean %.3f, "
          "import %.1f s, build+predict %.1f s, wall %.1f s"
          % (len(phys), len(logical), triage.count_params(), radio.count_params(), float(probs.mean()),
             t1 - T0, t2 - t1, time.perf_counter() - T0))


if __name__ == "__main__":
    main()
