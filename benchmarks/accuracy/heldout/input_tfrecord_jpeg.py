# An image classifier reading JPEG examples from TFRecord shards: parse, decode and resize
# in one serial map (no num_parallel_calls, no prefetch), the way the first draft looks.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

folder = tempfile.mkdtemp(prefix="shards-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
files = []
for shard in range(4):
    path = os.path.join(folder, f"train-{shard:05d}-of-00004.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(40):
            base = np.linspace(0, 255, 400, dtype=np.float32)[None, :, None]
            noise = rng.normal(0, 40, (400, 400, 3))
            image = np.clip(base + noise, 0, 255).astype(np.uint8)
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "image/encoded": tf.train.Feature(
                            bytes_list=tf.train.BytesList(
                                value=[tf.io.encode_jpeg(image, quality=92).numpy()]
                            )
                        ),
                        "image/class/label": tf.train.Feature(
                            int64_list=tf.train.Int64List(value=[int(rng.integers(10))])
                        ),
                    }
                )
            )
            writer.write(example.SerializeToString())
    files.append(path)

FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/class/label": tf.io.FixedLenFeature([], tf.int64),
}


def parse(record):
    example = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(example["image/encoded"], channels=3)
    image = tf.image.resize(image, (64, 64)) / 255.0
    return image, example["image/class/label"]


def dataset():
    return tf.data.TFRecordDataset(files).repeat().map(parse).batch(32)


model = keras.Sequential(
    [
        keras.Input((64, 64, 3)),
        keras.layers.Conv2D(8, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 350)
measure(model, dataset, 25)
