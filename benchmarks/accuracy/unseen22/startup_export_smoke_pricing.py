"""Deployment smoke test for the dynamic-pricing model: build, warm up, export, reload, serve once."""

import platform
import shutil
import sys
import tempfile
import time

t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

print(f"python {platform.python_version()} tensorflow {tf.__version__} keras {keras.__version__}")
print("devices:", [d.name for d in tf.config.list_physical_devices()])
print("built with cuda:", tf.test.is_built_with_cuda())

NUM_NUMERIC = 24
NUM_PRODUCTS = 5000
NUM_STORES = 300


def build_model():
    numeric = keras.Input((NUM_NUMERIC,), name="numeric")
    product = keras.Input((1,), dtype="int32", name="product_id")
    store = keras.Input((1,), dtype="int32", name="store_id")
    p = keras.layers.Flatten()(keras.layers.Embedding(NUM_PRODUCTS, 32)(product))
    s = keras.layers.Flatten()(keras.layers.Embedding(NUM_STORES, 8)(store))
    x = keras.layers.Concatenate()([keras.layers.BatchNormalization()(numeric), p, s])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    price_multiplier = keras.layers.Dense(1, activation="softplus", name="multiplier")(x)
    model = keras.Model([numeric, product, store], price_multiplier)
    model.compile(optimizer="adam", loss="mse")
    return model


model = build_model()
model.summary()

rng = np.random.default_rng(0)
sample = [
    rng.normal(size=(8, NUM_NUMERIC)).astype(np.float32),
    rng.integers(0, NUM_PRODUCTS, (8, 1)).astype(np.int32),
    rng.integers(0, NUM_STORES, (8, 1)).astype(np.int32),
]
warm = model.predict(sample, verbose=0)
print("warm-up prediction:", np.round(warm[:3, 0], 4))

export_dir = tempfile.mkdtemp(prefix="u22_startup_export_smoke_pricing_")
try:
    model.export(export_dir, format="tf_saved_model")
    reloaded = tf.saved_model.load(export_dir)
    serve = reloaded.serve
    served = serve([tf.constant(a) for a in sample])
    served = served.numpy() if hasattr(served, "numpy") else next(iter(served.values())).numpy()
    diff = float(np.max(np.abs(served - warm)))
    print(f"serving output matches keras: max abs diff {diff:.2e}")
    if diff > 1e-4:
        sys.exit("exported model does not match")
finally:
    shutil.rmtree(export_dir, ignore_errors=True)
print(f"smoke test passed in {time.perf_counter() - t0:.1f}s")
