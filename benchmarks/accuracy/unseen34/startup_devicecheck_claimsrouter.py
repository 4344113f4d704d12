"""Pre-deployment smoke check for an insurance-claims routing model.

Imports TensorFlow, reports the visible devices and threading setup, builds
the text+tabular routing model, prints its size and runs a prediction on a
handful of example claims.  No training.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

VOCAB = 30000
SEQ = 200
TAB = 24
ROUTES = 12


def build_model():
    text = keras.Input((SEQ,), dtype="int32", name="claim_text")
    tab = keras.Input((TAB,), name="claim_fields")
    x = keras.layers.Embedding(VOCAB, 128)(text)
    x = keras.layers.Conv1D(128, 5, activation="relu", padding="same")(x)
    x = keras.layers.Bidirectional(keras.layers.LSTM(64))(x)
    t = keras.layers.Dense(64, activation="relu")(keras.layers.Normalization()(tab))
    h = keras.layers.Concatenate()([x, t])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(ROUTES, activation="softmax", name="route")(h)
    return keras.Model([text, tab], out)


def main():
    t_import = time.perf_counter() - T0
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, imported in {t_import:.1f}s")
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    print("intra/inter op threads:", tf.config.threading.get_intra_op_parallelism_threads(),
          tf.config.threading.get_inter_op_parallelism_threads())
    print("built with CUDA:", tf.test.is_built_with_cuda())
    model = build_model()
    print(f"params: {model.count_params():,}")
    rng = np.random.default_rng(0)
    claims = rng.integers(1, VOCAB, size=(6, SEQ)).astype(np.int32)
    fields = rng.normal(size=(6, TAB)).astype(np.float32)
    probs = model.predict([claims, fields], verbose=0)
    print("routes:", probs.argmax(axis=1).tolist())
    print(f"startup check done in {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
