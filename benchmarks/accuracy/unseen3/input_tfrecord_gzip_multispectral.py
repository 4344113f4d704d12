# Land-cover classification from 6-band satellite tiles stored as raw uint16 in GZIP-compressed
# TFRecord shards. One map (no parallel calls) parses each record, decodes the bands, computes
# vegetation/water/built-up indices, standardises the bands and crops and flips the tile; the
# batches go through a one-element prefetch into model.fit.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

SIDE, CROP, BANDS, CLASSES, BATCH = 48, 40, 6, 5, 64
folder = tempfile.mkdtemp(prefix="tiles-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
# mean reflectance (x10000) per class for blue, green, red, NIR, SWIR1, SWIR2
SIGNATURES = np.array(
    [
        [400, 700, 500, 3500, 1800, 900],  # cropland
        [300, 500, 300, 4200, 1500, 700],  # forest
        [600, 700, 700, 400, 200, 150],  # water
        [1200, 1300, 1400, 2000, 2400, 2200],  # urban
        [1500, 1700, 2000, 2500, 3000, 2800],  # bare soil
    ]
)
options = tf.io.TFRecordOptions(compression_type="GZIP")
for shard in range(8):
    path = os.path.join(folder, f"tiles-{shard:02d}-of-08.tfrecord.gz")
    with tf.io.TFRecordWriter(path, options) as writer:
        for i in range(160):
            label = (shard * 160 + i) % CLASSES
            texture = rng.normal(1.0, 0.15, (SIDE, SIDE, 1)) * rng.normal(1.0, 0.05, BANDS)
            tile = np.clip(
                SIGNATURES[label] * texture + rng.normal(0, 60, (SIDE, SIDE, BANDS)), 0, 10000
            )
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "bands": tf.train.Feature(
                            bytes_list=tf.train.BytesList(value=[tile.astype(np.uint16).tobytes()])
                        ),
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                        "cloud": tf.train.Feature(
                            float_list=tf.train.FloatList(value=[rng.uniform(0, 0.3)])
                        ),
                    }
                )
            )
            writer.write(example.SerializeToString())

SPEC = {
    "bands": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "cloud": tf.io.FixedLenFeature([], tf.float32),
}


def normalized_difference(a, b):
    return (a - b) / (a + b + 1e-3)


def decode(record):
    example = tf.io.parse_single_example(record, SPEC)
    raw = tf.io.decode_raw(example["bands"], tf.uint16)
    bands = tf.reshape(tf.cast(raw, tf.float32), [SIDE, SIDE, BANDS]) / 10000.0
    blue, green, red, nir, swir1, _ = tf.unstack(bands, axis=-1)
    indices = tf.stack(
        [
            normalized_difference(nir, red),  # NDVI
            normalized_difference(green, nir),  # NDWI
            normalized_difference(swir1, nir),  # NDBI
        ],
        axis=-1,
    )
    mean, variance = tf.nn.moments(bands, axes=[0, 1], keepdims=True)
    bands = (bands - mean) / tf.sqrt(variance + 1e-6)
    tile = tf.concat([bands, indices, tf.fill([SIDE, SIDE, 1], example["cloud"])], axis=-1)
    tile = tf.image.random_crop(tile, [CROP, CROP, BANDS + 4])
    tile = tf.image.random_flip_left_right(tf.image.random_flip_up_down(tile))
    tile = tf.image.rot90(tile, tf.random.uniform([], 0, 4, tf.int32))
    return tile, example["label"]


def tiles():
    shards = tf.data.Dataset.list_files(os.path.join(folder, "*.tfrecord.gz"), seed=2)
    records = tf.data.TFRecordDataset(shards, compression_type="GZIP")
    return records.shuffle(512, seed=4).repeat().map(decode).batch(BATCH).prefetch(1)


model = keras.Sequential(
    [
        keras.Input((CROP, CROP, BANDS + 4)),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.Conv2D(96, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(CLASSES),
    ]
)
model.compile(
    keras.optimizers.Adam(1e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(tiles(), steps_per_epoch=3, verbose=0)
timed_fit(model, tiles(), 300)
measure(model, tiles, 30)
