import time; T0 = time.perf_counter()
"""Convention exhibit catalogue tooling: start TensorFlow, list devices, build and
compile the catalogue-entry classifier and the booth-photo encoder, and run one
smoke-test predict.  Nothing is trained and nothing is written."""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

t_import = time.perf_counter() - T0
devices = tf.config.list_physical_devices()
print("devices:", ", ".join(d.device_type for d in devices))

def catalogue_classifier(vocab=20000, categories=12):
    inp = keras.Input((64,), dtype="int32", name="entry_tokens")
    x = keras.layers.Embedding(vocab, 128)(inp)
    x = keras.layers.Conv1D(128, 5, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(categories, name="exhibit_category")(x)
    m = keras.Model(inp, out, name="catalogue_classifier")
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m

def booth_photo_encoder(size=96):
    inp = keras.Input((size, size, 3), name="booth_photo")
    x = inp
    for f in (32, 64, 128, 192):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(64, name="embedding")(x)
    m = keras.Model(inp, out, name="booth_photo_encoder")
    m.compile(optimizer="adam", loss="mse")
    return m

clf = catalogue_classifier()
enc = booth_photo_encoder()
rng = np.random.default_rng(98)
tokens = rng.integers(0, 20000, (16, 64)).astype(np.int32)
logits = clf.predict(tokens, verbose=0)
emb = enc.predict(rng.random((8, 96, 96, 3), dtype=np.float32), verbose=0)
# one encoder per hall camera resolution, each smoke-tested once
for size in (112, 128, 144, 160, 176, 192, 208, 224, 240, 256):
    hall = booth_photo_encoder(size)
    hall.predict(rng.random((4, size, size, 3), dtype=np.float32), verbose=0)
print(f"logical devices: {len(tf.config.list_logical_devices())}")
print(f"boothguide startup: import {t_import:.1f} s, params {clf.count_params() + enc.count_params()}, "
      f"predict shapes {logits.shape} {emb.shape}, wall {time.perf_counter()-T0:.1f} s")
