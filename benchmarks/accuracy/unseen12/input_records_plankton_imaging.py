"""Plankton taxa classification from flow-cytometer image crops stored as TFRecords.

At start-up the script writes many small TFRecord shards (JPEG-encoded RGB crops
plus metadata) into a temp dir, then trains a small CNN reading them back with a plain
TFRecordDataset -> parse -> decode_jpeg -> resize pipeline.

    python input_records_plankton_imaging.py [--truth]
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

NUM_SHARDS = 48
PER_SHARD = 50
CROP = 224
IMG = 64
BATCH_SIZE = 32
STEPS = 150
STAIN = np.array([0.9, 1.0, 0.8], dtype=np.float32)
TAXA = ["diatom", "copepod", "dinoflagellate", "ciliate", "radiolarian"]


def render_cell(rng, label):
    yy, xx = np.mgrid[0 : CROP // 2, 0 : CROP // 2].astype(np.float32)
    cy, cx = rng.uniform(40, 72, size=2)
    a, b = rng.uniform(8, 34), rng.uniform(6, 22)
    theta = rng.uniform(0, np.pi)
    u = (xx - cx) * np.cos(theta) + (yy - cy) * np.sin(theta)
    v = -(xx - cx) * np.sin(theta) + (yy - cy) * np.cos(theta)
    r = (u / a) ** 2 + (v / b) ** 2
    body = np.exp(-r * (1 + label))
    if label in (1, 4):  # appendages / spines
        ang = np.arctan2(v, u)
        body += 0.4 * (np.cos(ang * (3 + 2 * label)) > 0.8) * (r < 2.5)
    img = 40 + 180 * body
    # camera sensor is 2x the render grid, RGB with a slight stain tint
    img = np.repeat(np.repeat(img, 2, axis=0), 2, axis=1)[..., None] * STAIN
    img += rng.normal(0, 10, size=img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def write_shards(folder):
    rng = np.random.default_rng(0)
    paths = []
    for shard in range(NUM_SHARDS):
        path = os.path.join(folder, f"plankton-{shard:03d}-of-{NUM_SHARDS:03d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(PER_SHARD):
                label = int(rng.integers(len(TAXA)))
                jpg = tf.io.encode_jpeg(render_cell(rng, label), quality=90).numpy()
                feature = {
                    "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpg])),
                    "image/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    "image/depth_m": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[rng.uniform(0, 200)])
                    ),
                }
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/label": tf.io.FixedLenFeature([], tf.int64),
    "image/depth_m": tf.io.FixedLenFeature([], tf.float32),
}


def parse_example(serialized):
    ex = tf.io.parse_single_example(serialized, FEATURES)
    img = tf.io.decode_jpeg(ex["image/encoded"], channels=3)
    img = tf.image.resize(img, [IMG, IMG])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.per_image_standardization(img)
    return img, tf.cast(ex["image/label"], tf.int32)


def make_dataset(paths):
    ds = tf.data.TFRecordDataset(paths)
    ds = ds.map(parse_example)
    ds = ds.shuffle(256).repeat()
    return ds.batch(BATCH_SIZE)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((IMG, IMG, 3)),
            keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(len(TAXA), activation="softmax"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class TimeEachBatch(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def fit_once(dataset):
    keras.utils.set_random_seed(3)
    model = build_model()
    cb = TimeEachBatch()
    h = model.fit(dataset, steps_per_epoch=STEPS, epochs=1, callbacks=[cb], verbose=0)
    sec = (cb.ends[-1] - cb.ends[4]) / (len(cb.ends) - 5)
    return sec, h.history["loss"][-1]


def log_json(rec):
    target = os.environ.get("ACCURACY_OUT")
    if target:
        with open(target, "a") as f:
            print(json.dumps(rec), file=f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="plankton_")
    paths = write_shards(workdir)

    full, loss = fit_once(make_dataset(paths))
    log_json({"steps_per_second": 1.0 / full})
    msg = f"plankton: {len(paths)} shards, {STEPS} steps, {1 / full:.2f} steps/s, loss {loss:.3f}"
    if args.truth:
        batch = next(iter(make_dataset(paths)))
        compute, _ = fit_once(tf.data.Dataset.from_tensors(batch).repeat())
        frac = max(0.0, min(1.0, (full - compute) / full))
        log_json({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
