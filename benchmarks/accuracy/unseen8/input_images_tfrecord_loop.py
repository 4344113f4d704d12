"""Small image classifier trained with a hand-written GradientTape loop.

Training images live as JPEG bytes in many small TFRecord shards.
The input pipeline reads the shards one after another, decodes,
random-crops, flips and colour-jitters each image, with no parallel
calls and no prefetch.
"""

import argparse
import glob
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf

IMG = 160
CROP = 144
OUT = 64
BATCH = 48
N_SHARDS = 60
PER_SHARD = 40
N_CLASSES = 5
STEPS = 250


def synth_image(rng, label):
    yy, xx = np.mgrid[0:IMG, 0:IMG]
    img = rng.integers(0, 60, size=(IMG, IMG, 3)).astype(np.float32)
    cx, cy, r = rng.integers(40, 120), rng.integers(40, 120), rng.integers(15, 38)
    if label == 0:
        mask = (xx - cx) ** 2 + (yy - cy) ** 2 < r**2
    elif label == 1:
        mask = (abs(xx - cx) < r) & (abs(yy - cy) < r)
    elif label == 2:
        mask = abs(xx - cx) < r // 3
    elif label == 3:
        mask = abs(yy - cy) < r // 3
    else:
        mask = abs((xx - cx) - (yy - cy)) < r // 3
    img[mask] += rng.uniform(120, 190, size=3)
    return np.clip(img, 0, 255).astype(np.uint8)


def write_shards(folder, seed=0):
    rng = np.random.default_rng(seed)
    for s in range(N_SHARDS):
        path = os.path.join(folder, f"train-{s:04d}-of-{N_SHARDS:04d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(PER_SHARD):
                label = int(rng.integers(0, N_CLASSES))
                jpeg = tf.io.encode_jpeg(synth_image(rng, label), quality=90).numpy()
                ex = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "image/encoded": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[jpeg])
                            ),
                            "image/label": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[label])
                            ),
                        }
                    )
                )
                w.write(ex.SerializeToString())


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/label": tf.io.FixedLenFeature([], tf.int64),
}


def parse_and_augment(record):
    ex = tf.io.parse_single_example(record, FEATURES)
    img = tf.io.decode_jpeg(ex["image/encoded"], channels=3)
    img = tf.image.random_crop(img, [CROP, CROP, 3])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.random_brightness(img, 0.2)
    img = tf.image.random_contrast(img, 0.7, 1.3)
    img = tf.image.random_saturation(img, 0.7, 1.3)
    img = tf.image.random_hue(img, 0.05)
    img = tf.image.resize(img, [OUT, OUT])
    img = tf.image.per_image_standardization(img)
    return img, tf.cast(ex["image/label"], tf.int32)


def make_dataset(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.tfrecord")))
    ds = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files))
    ds = ds.flat_map(tf.data.TFRecordDataset)
    ds = ds.shuffle(256).map(parse_and_augment).batch(BATCH, drop_remainder=True)
    return ds.repeat()


def make_model():
    layers = tf.keras.layers
    return tf.keras.Sequential(
        [
            tf.keras.Input((OUT, OUT, 3)),
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.GlobalAveragePooling2D(),
            layers.Dense(N_CLASSES),
        ]
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="shards_")
    try:
        write_shards(data_dir)
        ds = make_dataset(data_dir)

        model = make_model()
        opt = tf.keras.optimizers.SGD(0.05, momentum=0.9)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        acc = tf.keras.metrics.SparseCategoricalAccuracy()

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            acc.update_state(y, logits)
            return loss

        def run(batches, n_steps):
            times = []
            t = time.perf_counter()
            for step, (x, y) in enumerate(batches):
                if step == n_steps:
                    break
                loss = train_step(x, y)
                if step % 40 == 0:
                    print(f"step {step:4d} loss {float(loss):.4f} acc {float(acc.result()):.3f}")
                now = time.perf_counter()
                times.append(now - t)
                t = now
            return times[5:]

        times = run(ds, STEPS)
        full = sum(times) / len(times)
        sps = len(times) / sum(times)
        print(f"train: {sps:.2f} steps/s over {len(times)} steps")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": sps}) + "\n")

        if args.truth:
            xb, yb = next(iter(ds))

            def same_batch():
                while True:
                    yield xb, yb

            ctimes = run(same_batch(), STEPS)
            compute = sum(ctimes) / len(ctimes)
            frac = min(1.0, max(0.0, (full - compute) / full))
            print(
                f"truth input fraction = {frac:.3f} (step {full * 1e3:.1f} ms, cached {compute * 1e3:.1f} ms)"
            )
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
