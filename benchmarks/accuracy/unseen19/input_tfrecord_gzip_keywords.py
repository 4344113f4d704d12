"""Keyword spotting on 1 s audio clips stored as GZIP TFRecords."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--clips", type=int, default=1500)
parser.add_argument("--shards", type=int, default=8)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--steps", type=int, default=80)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

SAMPLE_RATE = 16000
KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
N_MELS = 64


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


def write_shards(root):
    rng = np.random.default_rng(11)
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    paths = []
    for s in range(args.shards):
        path = os.path.join(root, f"clips-{s:03d}-of-{args.shards:03d}.tfrecord.gz")
        with tf.io.TFRecordWriter(path, options="GZIP") as writer:
            for n in range(s, args.clips, args.shards):
                k = n % len(KEYWORDS)
                audio = 0.3 * np.sin(2 * np.pi * (200 + 90 * k) * t) * np.hanning(SAMPLE_RATE)
                audio += 0.05 * rng.normal(size=SAMPLE_RATE)
                pcm = (np.clip(audio, -1, 1) * 32767).astype(np.int16)
                ex = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "audio": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[pcm.tobytes()])
                            ),
                            "label": tf.train.Feature(
                                bytes_list=tf.train.BytesList(
                                    value=[f"speech_commands/{KEYWORDS[k]}".encode()]
                                )
                            ),
                            "speaker": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[f"spk{n % 97}".encode()])
                            ),
                        }
                    )
                )
                writer.write(ex.SerializeToString())
        paths.append(path)
    return paths


FEATURES = {
    "audio": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.string),
    "speaker": tf.io.FixedLenFeature([], tf.string),
}
label_table = tf.lookup.StaticHashTable(
    tf.lookup.KeyValueTensorInitializer(
        tf.constant(KEYWORDS), tf.range(len(KEYWORDS), dtype=tf.int64)
    ),
    -1,
)
mel_matrix = tf.signal.linear_to_mel_weight_matrix(N_MELS, 513, SAMPLE_RATE, 20.0, 7600.0)


def parse_clip(record):
    ex = tf.io.parse_single_example(record, FEATURES)
    audio = tf.cast(tf.io.decode_raw(ex["audio"], tf.int16), tf.float32) / 32768.0
    audio = audio * tf.random.uniform([], 0.7, 1.3)
    shift = tf.random.uniform([], -1600, 1600, dtype=tf.int32)
    audio = tf.roll(audio, shift, axis=0)
    stft = tf.signal.stft(audio, frame_length=800, frame_step=80, fft_length=1024)
    mel = tf.tensordot(tf.abs(stft), mel_matrix, 1)
    logmel = tf.math.log(mel + 1e-6)
    logmel = (logmel - tf.reduce_mean(logmel)) / (tf.math.reduce_std(logmel) + 1e-6)
    image = tf.image.resize(logmel[..., tf.newaxis], (96, N_MELS))
    image = tf.image.random_crop(tf.pad(image, [[4, 4], [0, 0], [0, 0]]), (96, N_MELS, 1))
    word = tf.strings.split(ex["label"], "/")[-1]
    label = label_table.lookup(tf.strings.lower(tf.strings.strip(word)))
    return image, label


def build_model():
    model = keras.Sequential(
        [
            keras.Input(shape=(96, N_MELS, 1)),
            keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(len(KEYWORDS)),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


data_dir = tempfile.mkdtemp(prefix="u19_tfrecord_keywords_")
try:
    t0 = time.perf_counter()
    files = write_shards(data_dir)
    print(f"wrote {len(files)} gzip shards in {time.perf_counter() - t0:.1f}s")

    train_ds = (
        tf.data.TFRecordDataset(files, compression_type="GZIP")
        .map(parse_clip)
        .shuffle(512)
        .batch(args.batch_size, drop_remainder=True)
        .repeat()
    )

    clock = StepClock()
    model = build_model()
    model.fit(train_ds, epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=2)
    sec_full = clock.seconds_per_step()
    report("steps_per_second", 1.0 / sec_full)
    print(f"kws: {args.steps} steps, {sec_full * 1000:.1f} ms/step")

    if args.truth:
        batch = next(iter(train_ds))
        clock2 = StepClock()
        model2 = build_model()
        model2.fit(
            tf.data.Dataset.from_tensors(batch).repeat(),
            epochs=1,
            steps_per_epoch=args.steps,
            callbacks=[clock2],
            verbose=0,
        )
        sec_cached = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
        report("truth_input_fraction", frac)
        print(
            f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
        )
finally:
    shutil.rmtree(data_dir, ignore_errors=True)
