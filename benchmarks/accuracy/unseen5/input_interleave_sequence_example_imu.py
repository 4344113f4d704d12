# Recognises human activities (walking, stairs, cycling, sitting, ...) from wrist-worn IMU
# recordings. The recordings are stored as tf.train.SequenceExample records (one feature
# vector per time step: 3-axis accelerometer and gyroscope; subject and activity in the
# context) in TFRecord shards. The input pipeline interleaves the shards, parses each
# sequence, removes gravity with a moving average, adds magnitudes and jerk, takes a random
# 128-step window and a short spectrum; batches go straight to model.fit.
import argparse
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

SHARDS, PER_SHARD, WINDOW, BATCH, ACTIVITIES = 12, 100, 128, 64, 6
HZ = 50.0


def write_shards(folder, seed=0):
    rng = np.random.default_rng(seed)
    for shard in range(SHARDS):
        path = os.path.join(folder, f"imu-{shard:03d}-of-{SHARDS:03d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(PER_SHARD):
                activity = int(rng.integers(0, ACTIVITIES))
                steps = int(rng.integers(180, 420))
                t = np.arange(steps) / HZ
                cadence = 0.3 + 0.45 * activity
                acc = rng.normal(0, 0.15, (steps, 3)) + [0.0, 0.0, 9.81]
                acc += np.sin(2 * np.pi * cadence * t)[:, None] * rng.uniform(0.5, 3, 3)
                gyr = rng.normal(0, 0.05, (steps, 3))
                gyr += np.cos(2 * np.pi * cadence * t)[:, None] * rng.uniform(0, 1.5, 3)
                imu = np.concatenate([acc, gyr], 1).astype(np.float32)
                example = tf.train.SequenceExample(
                    context=tf.train.Features(
                        feature={
                            "subject": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[int(rng.integers(0, 30))])
                            ),
                            "activity": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[activity])
                            ),
                        }
                    ),
                    feature_lists=tf.train.FeatureLists(
                        feature_list={
                            "imu": tf.train.FeatureList(
                                feature=[
                                    tf.train.Feature(float_list=tf.train.FloatList(value=row))
                                    for row in imu
                                ]
                            )
                        }
                    ),
                )
                writer.write(example.SerializeToString())


CONTEXT = {
    "subject": tf.io.FixedLenFeature([], tf.int64),
    "activity": tf.io.FixedLenFeature([], tf.int64),
}
SEQUENCE = {"imu": tf.io.FixedLenSequenceFeature([6], tf.float32)}


def to_window(record):
    context, sequence = tf.io.parse_single_sequence_example(
        record, context_features=CONTEXT, sequence_features=SEQUENCE
    )
    imu = sequence["imu"]
    acc, gyr = imu[:, :3], imu[:, 3:]
    kernel = tf.ones([25, 1, 1]) / 25.0
    channels = tf.transpose(acc)[:, :, None]
    gravity = tf.transpose(tf.nn.conv1d(channels, kernel, 1, "SAME")[:, :, 0])
    body = acc - gravity
    body_mag = tf.norm(body, axis=1, keepdims=True)
    gyr_mag = tf.norm(gyr, axis=1, keepdims=True)
    jerk = tf.concat([tf.zeros([1, 3]), body[1:] - body[:-1]], 0) * HZ / 100
    features = tf.concat([body, gyr, body_mag, gyr_mag, jerk], 1)
    start = tf.random.uniform([], 0, tf.shape(features)[0] - WINDOW, dtype=tf.int32)
    window = features[start : start + WINDOW]
    spectrum = tf.abs(tf.signal.rfft(tf.transpose(window[:, 6:8])))[:, : WINDOW // 2]
    spectrum = tf.transpose(tf.math.log1p(spectrum))[: WINDOW // 2]
    window = (window - tf.reduce_mean(window, 0)) / (tf.math.reduce_std(window, 0) + 1e-3)
    spectrum = tf.pad(spectrum, [[0, WINDOW // 2], [0, 0]])
    return tf.concat([window, spectrum], 1), context["activity"]


def recordings(folder):
    files = tf.data.Dataset.list_files(os.path.join(folder, "imu-*.tfrecord"), shuffle=True)
    return (
        files.repeat()
        .interleave(tf.data.TFRecordDataset, cycle_length=4, block_length=4)
        .map(to_window)
        .batch(BATCH)
    )


def build_model():
    inputs = keras.Input((WINDOW, 13))
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inputs)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(ACTIVITIES)(h))
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    folder = tempfile.mkdtemp(prefix="imu-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_shards(folder)

    model = build_model()
    timed_fit(model, recordings(folder), 200)
    measure(model, lambda: recordings(folder), 200)
