"""Headstone-inscription OCR service: cold start only.

Imports TensorFlow, lists devices, builds and compiles the models the
service would load (an EfficientNetB0 stone-photo classifier, an inscription
line recogniser CNN and a date-parsing tagger), runs warm-up predicts, and exits without training.
Expected bottleneck: startup (imports / graph building).  Writes nothing to
ACCURACY_OUT.
"""
import time; T0 = time.perf_counter()
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter() - T0
devices = tf.config.list_physical_devices()


def line_recogniser():
    inp = keras.Input((48, 384, 1))
    x = inp
    for f in (32, 64, 128, 128):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D((2, 2))(x)
    x = keras.layers.Reshape((24, -1))(keras.layers.Permute((2, 1, 3))(x))
    x = keras.layers.Bidirectional(keras.layers.LSTM(128, return_sequences=True))(x)
    out = keras.layers.Dense(80)(x)                 # characters incl. long-s, thorn, ligatures
    model = keras.Model(inp, out, name="inscription_ocr")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def date_tagger():
    inp = keras.Input((64,), dtype="int32")
    x = keras.layers.Embedding(5000, 64)(inp)
    x = keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True))(x)
    out = keras.layers.Dense(7)(x)                  # B/I tags for day, month, year, age
    model = keras.Model(inp, out, name="date_tagger")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def stone_photo_classifier():
    backbone = keras.applications.EfficientNetB0(weights=None, include_top=False, input_shape=(224, 224, 3))
    x = keras.layers.GlobalAveragePooling2D()(backbone.output)
    out = keras.layers.Dense(12)(x)                 # stone material x condition classes
    model = keras.Model(backbone.input, out, name="stone_photo")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


photo = stone_photo_classifier()
ocr = line_recogniser()
tagger = date_tagger()
warm = ocr.predict(np.zeros((2, 48, 384, 1), np.float32), verbose=0)
cls = photo.predict(np.zeros((1, 224, 224, 3), np.float32), verbose=0)
tags = tagger.predict(np.ones((2, 64), np.int32), verbose=0)
print("headstones startup: import %.1f s, devices %s, %d + %d + %d params, warm-up outputs %s %s, wall %.1f s" % (
    T_IMPORT, [d.device_type for d in devices], photo.count_params(), ocr.count_params(), tagger.count_params(),
    warm.shape, tags.shape, time.perf_counter() - T0))
