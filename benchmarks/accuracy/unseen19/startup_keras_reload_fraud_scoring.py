"""Smoke test for the card-fraud scoring model: build, save, reload and score a few transactions."""

import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 48
N_MERCHANT_CATS = 400

print("TensorFlow", tf.__version__, "| Keras", keras.__version__)
print("devices:", [d.device_type + ":" + d.name for d in tf.config.list_physical_devices()])
print("built with CUDA:", tf.test.is_built_with_cuda())


def build_scorer():
    numeric = keras.Input(shape=(N_FEATURES,), name="numeric")
    merchant = keras.Input(shape=(1,), dtype="int32", name="merchant_category")
    history = keras.Input(shape=(20, 6), name="recent_transactions")

    m = keras.layers.Flatten()(keras.layers.Embedding(N_MERCHANT_CATS, 16)(merchant))
    h = keras.layers.LSTM(32)(history)
    x = keras.layers.Concatenate()([keras.layers.BatchNormalization()(numeric), m, h])
    for units in (256, 128, 64):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    score = keras.layers.Dense(1, activation="sigmoid", name="fraud_score")(x)
    model = keras.Model([numeric, merchant, history], score, name="fraud_scorer")
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
    return model


export_dir = tempfile.mkdtemp(prefix="u19_startup_fraud_")
try:
    t0 = time.perf_counter()
    model = build_scorer()
    model.summary()
    path = os.path.join(export_dir, "fraud_scorer.keras")
    model.save(path)
    restored = keras.models.load_model(path)

    rng = np.random.default_rng(1)
    batch = {
        "numeric": rng.normal(size=(8, N_FEATURES)).astype(np.float32),
        "merchant_category": rng.integers(0, N_MERCHANT_CATS, (8, 1)).astype(np.int32),
        "recent_transactions": rng.normal(size=(8, 20, 6)).astype(np.float32),
    }
    a = model.predict(batch, verbose=0)
    b = restored.predict(batch, verbose=0)
    print("max |original - restored| =", float(np.abs(a - b).max()))
    print("scores:", np.round(b.ravel(), 3).tolist())
    print(f"smoke test finished in {time.perf_counter() - t0:.1f}s")
finally:
    shutil.rmtree(export_dir, ignore_errors=True)
