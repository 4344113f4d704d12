"""Wind-turbine fault detection from variable-length SCADA sequences stored as SequenceExamples."""

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
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

NUM_SHARDS = 4
RECORDS_PER_SHARD = 300
CHANNELS = ["wind_speed", "rotor_rpm", "pitch", "yaw", "gen_temp", "gear_temp", "power", "vib"]
NUM_FAULTS = 5
VIB_RATE = 128
SPEC_BINS = 129
FEATURE_DIM = len(CHANNELS) + 16 + SPEC_BINS
BATCH = args.batch_size
STEPS = args.steps


def write_shards(folder):
    rng = np.random.default_rng(21)
    paths = []
    for s in range(NUM_SHARDS):
        path = os.path.join(folder, f"scada-{s:03d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECORDS_PER_SHARD):
                length = int(rng.integers(60, 240))
                context = tf.train.Features(
                    feature={
                        "turbine_id": tf.train.Feature(
                            int64_list=tf.train.Int64List(value=[int(rng.integers(100))])
                        ),
                        "fault": tf.train.Feature(
                            int64_list=tf.train.Int64List(value=[int(rng.integers(NUM_FAULTS))])
                        ),
                    }
                )
                lists = {}
                for ch in CHANNELS:
                    vals = rng.normal(size=length).astype(np.float32)
                    lists[ch] = tf.train.FeatureList(
                        feature=[
                            tf.train.Feature(float_list=tf.train.FloatList(value=[v])) for v in vals
                        ]
                    )
                vib = rng.normal(size=(length, VIB_RATE)).astype(np.float32)
                lists["vib_raw"] = tf.train.FeatureList(
                    feature=[tf.train.Feature(float_list=tf.train.FloatList(value=v)) for v in vib]
                )
                lists["status_code"] = tf.train.FeatureList(
                    feature=[
                        tf.train.Feature(int64_list=tf.train.Int64List(value=[int(c)]))
                        for c in rng.integers(0, 16, length)
                    ]
                )
                ex = tf.train.SequenceExample(
                    context=context, feature_lists=tf.train.FeatureLists(feature_list=lists)
                )
                w.write(ex.SerializeToString())
        paths.append(path)
    return paths


CONTEXT_SPEC = {
    "turbine_id": tf.io.FixedLenFeature([], tf.int64),
    "fault": tf.io.FixedLenFeature([], tf.int64),
}
SEQUENCE_SPEC = {ch: tf.io.FixedLenSequenceFeature([], tf.float32) for ch in CHANNELS}
SEQUENCE_SPEC["vib_raw"] = tf.io.FixedLenSequenceFeature([VIB_RATE], tf.float32)
SEQUENCE_SPEC["status_code"] = tf.io.FixedLenSequenceFeature([], tf.int64)


def parse(serialized):
    ctx, seq = tf.io.parse_single_sequence_example(
        serialized, context_features=CONTEXT_SPEC, sequence_features=SEQUENCE_SPEC
    )
    x = tf.stack([seq[ch] for ch in CHANNELS], axis=-1)
    x = (x - tf.reduce_mean(x, axis=0)) / (tf.math.reduce_std(x, axis=0) + 1e-6)
    status = tf.one_hot(seq["status_code"], 16)
    wave = tf.reshape(seq["vib_raw"], [-1])
    wave = tf.pad(wave, [[VIB_RATE // 2, VIB_RATE // 2]])
    spec = tf.signal.stft(
        wave, frame_length=2 * VIB_RATE, frame_step=VIB_RATE, fft_length=2 * VIB_RATE
    )
    spec = tf.math.log1p(tf.abs(spec))[: tf.shape(x)[0]]
    # robust per-bin scaling (median / IQR) so faulty sensors do not dominate
    srt = tf.sort(spec, axis=0)
    n = tf.shape(srt)[0]
    q1, med, q3 = srt[n // 4], srt[n // 2], srt[(3 * n) // 4]
    spec = (spec - med) / (q3 - q1 + 1e-3)
    return tf.concat([x, status, spec], axis=-1), ctx["fault"]


def make_dataset(paths):
    ds = tf.data.TFRecordDataset(paths)
    ds = ds.map(parse)
    ds = ds.repeat()
    return ds.padded_batch(BATCH, padded_shapes=([None, FEATURE_DIM], []))


def build_model():
    inp = keras.Input((None, FEATURE_DIM))
    x = keras.layers.Conv1D(48, 8, strides=4, padding="same", activation="relu")(inp)
    x = keras.layers.GRU(48)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(NUM_FAULTS)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds):
    keras.utils.set_random_seed(2)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    tmp = tempfile.mkdtemp(prefix="u22_input_tfrecord_sequence_turbine_")
    try:
        paths = write_shards(tmp)
        full = train(make_dataset(paths))
        append_out({"steps_per_second": 1.0 / full})
        msg = f"turbine: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            batch = next(iter(make_dataset(paths)))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_out({"truth_input_fraction": frac})
            msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
