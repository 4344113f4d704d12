"""Sanity check before deploying the transaction fraud scorer: versions, devices, model smoke test."""

import platform
import sys
import time

t_start = time.time()

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 64
N_MERCHANT_CATS = 500


def report_environment():
    print(f"python      {sys.version.split()[0]} on {platform.platform()}")
    print(f"tensorflow  {tf.__version__}")
    print(f"keras       {keras.__version__}  backend={keras.backend.backend()}")
    print(f"numpy       {np.__version__}")
    build = tf.sysconfig.get_build_info()
    print(f"cuda build  {build.get('is_cuda_build', False)}")
    for dev in tf.config.list_physical_devices():
        print(f"physical    {dev.device_type:4s} {dev.name}")
    for dev in tf.config.list_logical_devices():
        print(f"logical     {dev.device_type:4s} {dev.name}")
    print(f"gpu available: {bool(tf.config.list_physical_devices('GPU'))}")
    print(f"intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads()}")


def build_scorer():
    num_in = keras.Input(shape=(N_FEATURES,), name="numeric")
    cat_in = keras.Input(shape=(1,), dtype="int32", name="merchant_category")
    emb = keras.layers.Flatten()(keras.layers.Embedding(N_MERCHANT_CATS, 16)(cat_in))
    x = keras.layers.Concatenate()([keras.layers.BatchNormalization()(num_in), emb])
    for units in (256, 128, 64):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(1, activation="sigmoid", name="fraud_prob")(x)
    model = keras.Model([num_in, cat_in], out, name="fraud_scorer")
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC", "Precision"])
    return model


def smoke_test(model):
    rng = np.random.default_rng(0)
    for batch in (8, 64):
        numeric = rng.normal(size=(batch, N_FEATURES)).astype(np.float32)
        cats = rng.integers(0, N_MERCHANT_CATS, size=(batch, 1)).astype(np.int32)
        t0 = time.time()
        probs = model.predict({"numeric": numeric, "merchant_category": cats}, verbose=0)
        print(f"predict batch={batch:3d}: mean p={probs.mean():.3f} in {time.time() - t0:.2f}s")
        assert probs.shape == (batch, 1) and np.all((probs >= 0) & (probs <= 1))


def main():
    print(f"imports done in {time.time() - t_start:.1f}s")
    report_environment()
    model = build_scorer()
    model.summary()
    smoke_test(model)
    print(f"environment check passed in {time.time() - t_start:.1f}s")


if __name__ == "__main__":
    main()
