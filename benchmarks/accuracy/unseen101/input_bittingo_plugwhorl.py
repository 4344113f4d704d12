import time; T0 = time.perf_counter()
"""Door-hardware wear classifier read from hundreds of tiny TFRecord shards.

Each work-order from a locksmith van is written as its own TFRecord file of 1-3
records (a strike-plate wear scan plus a label).  Training streams them with
list_files -> interleave(TFRecordDataset) -> serial parse map -> batch.
"""
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1014
BATCH = 256
STEPS = 130
EPOCHS = 5
N_FILES = 600
SCAN = 1024
N_BINS = 128
N_CLASSES = 4


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def write_shards(root):
    rs = np.random.RandomState(SEED)
    for i in range(N_FILES):
        path = os.path.join(root, f"workorder-{i:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(rs.randint(1, 4)):
                wear = rs.randint(0, N_CLASSES)
                scan = (rs.normal(0, 1, SCAN) + wear * np.linspace(0, 1, SCAN)).astype(np.float32)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "scan": tf.train.Feature(bytes_list=tf.train.BytesList(value=[scan.tobytes()])),
                    "door": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rs.randint(0, 50))])),
                    "wear": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(wear)])),
                }))
                w.write(ex.SerializeToString())


FEATURE_SPEC = {
    "scan": tf.io.FixedLenFeature([], tf.string),
    "door": tf.io.FixedLenFeature([], tf.int64),
    "wear": tf.io.FixedLenFeature([], tf.int64),
}


def parse(record):
    ex = tf.io.parse_single_example(record, FEATURE_SPEC)
    scan = tf.io.decode_raw(ex["scan"], tf.float32)
    scan = tf.reshape(scan, (SCAN,))
    scan = (scan - tf.reduce_mean(scan)) / (tf.math.reduce_std(scan) + 1e-6)
    spectrum = tf.abs(tf.signal.rfft(scan))[:N_BINS]
    profile = tf.reduce_mean(tf.reshape(scan, (N_BINS, -1)), axis=1)
    door = tf.one_hot(ex["door"], 50)
    return tf.concat([tf.math.log1p(spectrum), profile, door], 0), tf.cast(ex["wear"], tf.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((2 * N_BINS + 50,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u101_input_bittingo_plugwhorl_")
try:
    write_shards(tmp)
    files = tf.data.Dataset.list_files(os.path.join(tmp, "*.tfrecord"), shuffle=True, seed=SEED)
    ds = (files.interleave(tf.data.TFRecordDataset, cycle_length=4, block_length=1)
          .map(parse)
          .batch(BATCH)
          .repeat())
    full = train(ds)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    msg = f"input_bittingo_plugwhorl: {1.0/full:.2f} steps/s, wall {wall:.1f}s"

    if TRUTH:
        batch = next(iter(ds))
        batch = (batch[0].numpy(), batch[1].numpy())
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
