"""Land-cover classification of aerial image tiles stored as PNG in TFRecord shards."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_SHARDS = 8
N_TILES = 1200
TILE = 128
CROP = 112
N_CLASSES = 6
BATCH_SIZE = 32
STEPS_PER_EPOCH = 40
EPOCHS = 3
LR = 1e-3


def synth_tile(rng, label):
    yy, xx = np.mgrid[0:TILE, 0:TILE].astype(np.float32)
    freq = 0.05 + 0.03 * label
    base = np.stack(
        [
            np.sin(freq * xx + rng.uniform(0, 6)) * 60 + 100 + 15 * label,
            np.cos(freq * yy + rng.uniform(0, 6)) * 50 + 110,
            np.sin(freq * (xx + yy)) * 40 + 90 - 10 * label,
        ],
        axis=-1,
    )
    base += rng.normal(0, 12, base.shape)
    return np.clip(base, 0, 255).astype(np.uint8)


def write_shards(out_dir, seed=0):
    rng = np.random.default_rng(seed)
    writers = [
        tf.io.TFRecordWriter(os.path.join(out_dir, f"tiles-{i:03d}.tfrecord"))
        for i in range(N_SHARDS)
    ]
    for i in range(N_TILES):
        label = int(rng.integers(N_CLASSES))
        png = tf.io.encode_png(synth_tile(rng, label)).numpy()
        example = tf.train.Example(
            features=tf.train.Features(
                feature={
                    "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
                    "image/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                }
            )
        )
        writers[i % N_SHARDS].write(example.SerializeToString())
    for w in writers:
        w.close()


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/label": tf.io.FixedLenFeature([], tf.int64),
}


def parse_and_augment(record):
    ex = tf.io.parse_single_example(record, FEATURES)
    img = tf.io.decode_png(ex["image/encoded"], channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.random_crop(img, [CROP, CROP, 3])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_flip_up_down(img)
    img = tf.image.rot90(img, k=tf.random.uniform([], 0, 4, dtype=tf.int32))
    img = tf.image.random_brightness(img, 0.15)
    img = tf.image.random_contrast(img, 0.8, 1.2)
    img = tf.image.random_saturation(img, 0.8, 1.2)
    img = tf.image.random_hue(img, 0.05)
    img = tf.clip_by_value(img, 0.0, 1.0)
    img = tf.image.random_jpeg_quality(img, 60, 100)
    return img, ex["image/label"]


def make_dataset(shard_dir):
    files = tf.data.Dataset.list_files(os.path.join(shard_dir, "*.tfrecord"), shuffle=True)
    ds = files.interleave(
        tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE
    )
    ds = ds.shuffle(512).map(parse_and_augment).batch(BATCH_SIZE)
    return ds.repeat()


def build_model():
    inp = keras.Input((CROP, CROP, 3))
    x = keras.layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend(np.diff(times).tolist())
        return float(np.mean(durations[skip:]))


def train(dataset):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u23_input_tfrecord_")
    try:
        write_shards(workdir)
        print(f"wrote {N_TILES} tiles into {N_SHARDS} shards")
        dataset = make_dataset(workdir)
        full = train(dataset)
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full={full * 1000:.1f} ms/step"
        if args.truth:
            batch = next(iter(dataset))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
        print(f"land_cover: {summary} steps/s={1.0 / full:.2f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
