# Sanity check before launching the marketplace-listing job: report the TensorFlow/Keras set-up
# and visible devices, then build the two-tower listing model (ResNet50V2 image tower without
# pretrained weights, a text tower over listing titles with a fixed vocabulary, a tabular
# branch), compile it with its two heads, print the summary and write its config to disk.
# Nothing is trained.
import json
import os
import sys
import tempfile

import keras
import numpy as np
import tensorflow as tf

print("python", sys.version.split()[0], "tensorflow", tf.__version__, "keras", keras.__version__)
print("built with CUDA:", tf.test.is_built_with_cuda())
for device in tf.config.list_physical_devices():
    print("device:", device.device_type, device.name)
print("logical CPUs:", len(tf.config.list_logical_devices("CPU")), "| os cpus:", os.cpu_count())
if not tf.config.list_physical_devices("GPU"):
    print("no GPU visible: the job would run on CPU")

VOCAB = [f"tok{i}" for i in range(5000)]
CATEGORIES = 40

image = keras.Input((160, 160, 3), name="photo")
title = keras.Input((), dtype="string", name="title")
numeric = keras.Input((6,), name="price_and_seller_stats")

tower = keras.applications.ResNet50V2(
    include_top=False, weights=None, input_shape=(160, 160, 3), pooling="avg"
)
img = tower(keras.layers.Rescaling(1 / 255.0)(image))
vectorize = keras.layers.TextVectorization(vocabulary=VOCAB, output_sequence_length=24)
txt = keras.layers.Embedding(len(VOCAB) + 2, 64)(vectorize(title))
txt = keras.layers.GlobalAveragePooling1D()(txt)
num = keras.layers.Dense(32, activation="relu")(keras.layers.BatchNormalization()(numeric))
joint = keras.layers.Concatenate()([img, txt, num])
joint = keras.layers.Dense(512, activation="relu")(joint)
category = keras.layers.Dense(CATEGORIES, name="category")(joint)
sells_in_week = keras.layers.Dense(1, activation="sigmoid", name="sells_in_week")(joint)
model = keras.Model([image, title, numeric], [category, sells_in_week], name="listing_model")
model.compile(
    optimizer=keras.optimizers.AdamW(3e-4, weight_decay=1e-4),
    loss={
        "category": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        "sells_in_week": keras.losses.BinaryCrossentropy(),
    },
    loss_weights={"category": 1.0, "sells_in_week": 0.5},
    metrics={"category": ["accuracy"], "sells_in_week": [keras.metrics.AUC(name="auc")]},
)
model.summary(line_length=110)
params = sum(int(np.prod(w.shape)) for w in model.weights)
print(f"total weights: {params:,}")
config_path = os.path.join(tempfile.gettempdir(), "listing_model_config.json")
with open(config_path, "w") as fh:
    json.dump(model.get_config(), fh, default=str)
print("config written to", config_path, f"({os.path.getsize(config_path):,} bytes)")
os.remove(config_path)
