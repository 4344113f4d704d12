"""Marketplace storefront model-serving preflight.

Before a deploy, the service checks which devices TensorFlow sees, builds
and compiles its three storefront models (listing ranker, search CTR model,
image-embedding tower for thumbnails), prints their parameter counts and
runs one predict on a small synthetic request batch for each. Nothing is
trained; data are random arrays generated in the script.
"""
import os
import sys
import json
import time
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def ranker():
    q = keras.Input((32,), dtype="int32", name="query_tokens")
    f = keras.Input((48,), name="listing_feats")
    e = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(30000, 64)(q))
    x = keras.layers.Concatenate()([e, f])
    for w in (512, 256, 128):
        x = keras.layers.Dense(w, activation="relu")(x)
    return keras.Model([q, f], keras.layers.Dense(1)(x), name="listing_ranker")


def ctr():
    ids = keras.Input((20,), dtype="int32", name="cat_ids")
    e = keras.layers.Flatten()(keras.layers.Embedding(100000, 16)(ids))
    x = keras.layers.Dense(400, activation="relu")(e)
    x = keras.layers.Dense(400, activation="relu")(x)
    return keras.Model(ids, keras.layers.Dense(1, activation="sigmoid")(x), name="search_ctr")


def thumb_tower():
    img = keras.Input((96, 96, 3), name="thumbnail")
    x = keras.layers.Rescaling(1 / 255.0)(img)
    for f in (32, 64, 128):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.SeparableConv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(img, keras.layers.Dense(128)(x), name="thumb_embed")


def main():
    tmp = tempfile.mkdtemp(prefix="u56_startup_storefront_preflight_marketplace_")
    try:
        t0 = time.perf_counter()
        devices = tf.config.list_physical_devices()
        gpus = tf.config.list_physical_devices("GPU")
        keras.utils.set_random_seed(1)
        rng = np.random.default_rng(1)
        counts = {}
        models = [ranker(), ctr(), thumb_tower()]
        models[0].compile(optimizer="adam", loss="mse")
        models[1].compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
        models[2].compile(optimizer="adam", loss="cosine_similarity")
        inputs = [
            [rng.integers(0, 30000, (16, 32)).astype("int32"), rng.random((16, 48), dtype=np.float32)],
            rng.integers(0, 100000, (16, 20)).astype("int32"),
            rng.integers(0, 255, (8, 96, 96, 3)).astype("float32"),
        ]
        for m, x in zip(models, inputs):
            out = m.predict(x, verbose=0)
            counts[m.name] = (m.count_params(), tuple(out.shape))
        with open(os.path.join(tmp, "preflight.json"), "w") as fh:
            json.dump({k: v[0] for k, v in counts.items()}, fh)
        print("startup_storefront_preflight_marketplace: %d devices (%d GPU), %s (%.1f s)" % (
            len(devices), len(gpus), ", ".join("%s=%d params" % (k, v[0]) for k, v in counts.items()),
            time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
