"""Pre-flight check for a parcel-sorting hub's model stack (label-image CNN, address-text
classifier and a dimensional-weight regressor). Nothing is trained: the script imports
TensorFlow, inspects the visible devices, builds and compiles the three models, runs one
predict on a small synthetic batch per model and prints a readiness line.
"""
import os
import shutil
import sys
import tempfile
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50


def label_cnn():
    inp = keras.Input((128, 128, 3))
    x = keras.layers.Rescaling(1 / 255.0)(inp)
    for f in (32, 64, 128, 192):
        x = keras.layers.Conv2D(f, 3, padding="same", use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.ReLU()(x)
        x = keras.layers.SeparableConv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(24, name="sort_lane")(x)
    return keras.Model(inp, out, name="label_cnn")


def address_classifier():
    inp = keras.Input((48,), dtype="int32")
    x = keras.layers.Embedding(12000, 96)(inp)
    x = keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True))(x)
    x = keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(300, name="postcode_region")(x)
    return keras.Model(inp, out, name="address_classifier")


def dimweight_regressor():
    num = keras.Input((14,), name="numeric")
    cat = keras.Input((3,), dtype="int32", name="categorical")
    e = keras.layers.Flatten()(keras.layers.Embedding(500, 8)(cat))
    x = keras.layers.Concatenate()([keras.layers.Normalization()(num), e])
    for u in (256, 128, 64):
        x = keras.layers.Dense(u, activation="swish")(x)
    out = keras.layers.Dense(2, name="weight_and_volume")(x)
    return keras.Model([num, cat], out, name="dimweight_regressor")


def main():
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_startup_multihead_preflight_parcelsort_")
    try:
        devices = tf.config.list_physical_devices()
        logical = tf.config.list_logical_devices()
        threads = (tf.config.threading.get_intra_op_parallelism_threads(),
                   tf.config.threading.get_inter_op_parallelism_threads())
        rng = np.random.default_rng(SEED)
        models = [label_cnn(), address_classifier(), dimweight_regressor()]
        models[0].compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        models[1].compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        models[2].compile(optimizer="adam", loss="huber")
        batches = [rng.integers(0, 255, (8, 128, 128, 3)).astype("float32"),
                   rng.integers(0, 12000, (8, 48)).astype("int32"),
                   [rng.normal(size=(8, 14)).astype("float32"), rng.integers(0, 500, (8, 3)).astype("int32")]]
        shapes = []
        for m, b in zip(models, batches):
            shapes.append(tuple(m.predict(b, verbose=0).shape))
        params = sum(m.count_params() for m in models)
        print(f"startup_multihead_preflight_parcelsort: devices={[d.device_type for d in devices]} "
              f"logical={len(logical)} threads={threads} models={len(models)} params={params} "
              f"outputs={shapes} wall={time.perf_counter() - T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
