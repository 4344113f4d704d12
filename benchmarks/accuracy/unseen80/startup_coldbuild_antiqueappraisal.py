"""Antique appraisal service start-up: no training.

Imports TensorFlow, lists devices, builds and compiles two models (a photo
condition scorer and a tabular auction-estimate regressor on maker, period,
material and provenance features) and runs one predict on a dummy item.
Writes nothing to ACCURACY_OUT.
"""
import time; T0 = time.perf_counter()
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

PERIODS = ["Georgian", "Regency", "Victorian", "Edwardian", "Art Nouveau", "Art Deco", "Mid-century"]
MATERIALS = ["mahogany", "walnut", "oak", "silver", "porcelain", "bronze", "glass", "enamel"]


def photo_scorer():
    inp = keras.Input((224, 224, 3), name="item_photo")
    backbone = keras.applications.EfficientNetB0(include_top=False, weights=None,
                                                 input_shape=(224, 224, 3), pooling="avg")
    x = backbone(inp)
    cond = layers.Dense(5, activation="softmax", name="condition")(x)
    restore = layers.Dense(1, activation="sigmoid", name="restoration")(x)
    model = keras.Model(inp, [cond, restore], name="photo_scorer")
    model.compile(optimizer="adam",
                  loss={"condition": "sparse_categorical_crossentropy",
                        "restoration": "binary_crossentropy"})
    return model


def estimate_regressor():
    period = keras.Input((1,), dtype="int32", name="period")
    material = keras.Input((1,), dtype="int32", name="material")
    numeric = keras.Input((12,), name="numeric")
    p = layers.Flatten()(layers.Embedding(len(PERIODS), 8)(period))
    m = layers.Flatten()(layers.Embedding(len(MATERIALS), 8)(material))
    x = layers.Concatenate()([p, m, layers.Normalization()(numeric)])
    for units in (256, 128, 64):
        x = layers.Dense(units, activation="relu")(x)
    out = layers.Dense(2, name="low_high_estimate")(x)
    model = keras.Model([period, material, numeric], out, name="estimate_regressor")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="huber")
    return model


def main():
    devices = tf.config.list_physical_devices()
    scorer = photo_scorer()
    regressor = estimate_regressor()
    rng = np.random.default_rng(1900)
    photo = rng.integers(0, 255, size=(1, 224, 224, 3)).astype("float32")
    cond, restore = scorer.predict(photo, verbose=0)
    est = regressor.predict({"period": np.array([[3]]), "material": np.array([[0]]),
                             "numeric": rng.normal(size=(1, 12)).astype("float32")}, verbose=0)
    print(f"[antiqueappraisal] devices {[d.device_type for d in devices]}, "
          f"params {scorer.count_params() + regressor.count_params()}, "
          f"condition {int(cond.argmax())}, estimate {est[0].round(2).tolist()}, "
          f"wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
