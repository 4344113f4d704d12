"""Land-cover classification of satellite tiles stored as sharded TFRecords (JPEG bytes)."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_SHARDS = 6
TILES_PER_SHARD = 200
RAW_SIZE = 144
CROP = 112
IMG_SIZE = 96
N_CLASSES = 7
BATCH_SIZE = 32
STEPS = 200
SEED = 29


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def write_shards(folder, rng):
    paths = []
    palette = rng.integers(30, 220, size=(N_CLASSES, 3))
    for s in range(N_SHARDS):
        path = os.path.join(folder, f"tiles-{s:05d}-of-{N_SHARDS:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(TILES_PER_SHARD):
                label = int(rng.integers(0, N_CLASSES))
                tile = np.ones((RAW_SIZE, RAW_SIZE, 3)) * palette[label]
                tile += (
                    rng.normal(0, 25, (RAW_SIZE // 8, RAW_SIZE // 8, 3)).repeat(8, 0).repeat(8, 1)
                )
                tile += rng.normal(0, 10, tile.shape)
                jpeg = tf.io.encode_jpeg(np.clip(tile, 0, 255).astype(np.uint8), quality=90)
                ex = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "image/encoded": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[jpeg.numpy()])
                            ),
                            "image/class": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[label])
                            ),
                        }
                    )
                )
                writer.write(ex.SerializeToString())
        paths.append(path)
    return paths


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/class": tf.io.FixedLenFeature([], tf.int64),
}


def random_rotate(img, max_radians=0.5):
    angle = tf.random.uniform([], -max_radians, max_radians)
    h = tf.cast(tf.shape(img)[0], tf.float32)
    w = tf.cast(tf.shape(img)[1], tf.float32)
    cos, sin = tf.cos(angle), tf.sin(angle)
    x_off = ((w - 1) - (cos * (w - 1) - sin * (h - 1))) / 2.0
    y_off = ((h - 1) - (sin * (w - 1) + cos * (h - 1))) / 2.0
    transform = tf.stack([cos, -sin, x_off, sin, cos, y_off, 0.0, 0.0])[None]
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=img[None],
        transforms=transform,
        output_shape=tf.shape(img)[:2],
        fill_value=0.0,
        interpolation="BILINEAR",
        fill_mode="REFLECT",
    )
    return out[0]


def gaussian_blur(img, sigma):
    x = tf.range(-2, 3, dtype=tf.float32)
    k = tf.exp(-(x**2) / (2 * sigma**2))
    k = k / tf.reduce_sum(k)
    kernel = tf.tile(tf.reshape(k[:, None] * k[None, :], (5, 5, 1, 1)), (1, 1, 3, 1))
    return tf.nn.depthwise_conv2d(img[None], kernel, [1, 1, 1, 1], "SAME")[0]


def parse_and_augment(record):
    ex = tf.io.parse_single_example(record, FEATURES)
    img = tf.io.decode_jpeg(ex["image/encoded"], channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = random_rotate(img)
    img = tf.image.random_crop(img, (CROP, CROP, 3))
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_flip_up_down(img)
    img = tf.image.rot90(img, k=tf.random.uniform([], 0, 4, dtype=tf.int32))
    img = tf.image.random_brightness(img, 0.15)
    img = tf.image.random_contrast(img, 0.8, 1.2)
    img = tf.image.random_saturation(img, 0.8, 1.2)
    img = tf.image.random_hue(img, 0.05)
    img = gaussian_blur(img, tf.random.uniform([], 0.3, 1.2))
    img = img + tf.random.normal(tf.shape(img), stddev=0.02)
    img = tf.image.resize(img, (IMG_SIZE, IMG_SIZE), method="bicubic")
    img = tf.image.per_image_standardization(img)
    return img, tf.cast(ex["image/class"], tf.int32)


def make_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).repeat()
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=1)
    ds = ds.shuffle(256, seed=SEED)
    ds = ds.map(parse_and_augment)
    ds = ds.batch(BATCH_SIZE)
    return ds


def build_model():
    inp = keras.Input(shape=(IMG_SIZE, IMG_SIZE, 3))
    x = keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    workdir = tempfile.mkdtemp(prefix="u14_input_tfrecord_satellite_tiles_")
    try:
        paths = write_shards(workdir, rng)
        print(f"wrote {len(paths)} shards x {TILES_PER_SHARD} tiles")

        model = build_model()
        clock = StepClock()
        t0 = time.perf_counter()
        hist = model.fit(
            make_dataset(paths), epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=0
        )
        full = clock.seconds_per_step()
        print(
            f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
            f"acc={hist.history['accuracy'][-1]:.3f}"
        )
        out_path = os.environ.get("ACCURACY_OUT")
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

        if args.truth:
            batch = next(iter(make_dataset(paths)))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            clock2 = StepClock()
            model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
            compute = clock2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            if out_path:
                with open(out_path, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
        print(f"satellite CNN: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
