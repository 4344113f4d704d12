import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


# Toy-store till receipts: every till uploads each receipt as its own tiny
# TFRecord file (store, till, timestamp, and a packed "sku:qty:price" line-item
# string).  tf.data lists the files, reads them one by one and parses every
# record with parse_single_example plus string splitting, number conversion
# and SKU hashing (serial map); the label is whether the basket contained a
# promotional item.
N_FILES = 1600
RECS_PER_FILE = 2
MAX_ITEMS = 24
SKU_BUCKETS = 512
BATCH = 64
STEPS = 330
EPOCHS = 3


def write_receipts(root, seed):
    rng = np.random.default_rng(seed)
    paths = []
    for f in range(N_FILES):
        store = int(rng.integers(1, 40))
        path = os.path.join(root, f"store{store:02d}_till{f % 7}_{f:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECS_PER_FILE):
                n = int(rng.integers(1, MAX_ITEMS))
                items = []
                promo = 0
                for _ in range(n):
                    sku = int(rng.integers(10000, 99999))
                    qty = int(rng.integers(1, 4))
                    price = float(rng.choice([2.99, 4.5, 9.99, 14.99, 24.99, 49.99]))
                    if sku % 11 == 0:
                        promo = 1
                    items.append(f"SKU{sku}:{qty}:{price:.2f}")
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "store": tf.train.Feature(int64_list=tf.train.Int64List(value=[store])),
                    "till": tf.train.Feature(int64_list=tf.train.Int64List(value=[f % 7])),
                    "ts": tf.train.Feature(bytes_list=tf.train.BytesList(value=[
                        f"2026-12-{int(rng.integers(1, 24)):02d}T{int(rng.integers(9, 19)):02d}:{int(rng.integers(0, 60)):02d}".encode()])),
                    "items": tf.train.Feature(bytes_list=tf.train.BytesList(value=[";".join(items).encode()])),
                    "promo": tf.train.Feature(int64_list=tf.train.Int64List(value=[promo])),
                }))
                w.write(ex.SerializeToString())
        paths.append(path)
    return paths


SPEC = {
    "store": tf.io.FixedLenFeature([], tf.int64),
    "till": tf.io.FixedLenFeature([], tf.int64),
    "ts": tf.io.FixedLenFeature([], tf.string),
    "items": tf.io.FixedLenFeature([], tf.string),
    "promo": tf.io.FixedLenFeature([], tf.int64),
}


def parse_receipt(serialized):
    ex = tf.io.parse_single_example(serialized, SPEC)
    items = tf.strings.split(ex["items"], ";")
    parts = tf.strings.split(items, ":").to_tensor(default_value="0", shape=[None, 3])
    sku_hash = tf.strings.to_hash_bucket_fast(parts[:, 0], SKU_BUCKETS)
    qty = tf.strings.to_number(parts[:, 1])
    price = tf.strings.to_number(parts[:, 2])
    basket = tf.math.unsorted_segment_sum(qty, sku_hash, SKU_BUCKETS)
    spend = tf.reduce_sum(qty * price)
    hour = tf.strings.to_number(tf.strings.substr(ex["ts"], 11, 2))
    day = tf.strings.to_number(tf.strings.substr(ex["ts"], 8, 2))
    dense = tf.stack([tf.math.log1p(spend), hour / 24.0, day / 31.0,
                      tf.cast(ex["store"], tf.float32) / 40.0, tf.cast(ex["till"], tf.float32) / 7.0,
                      tf.cast(tf.size(items), tf.float32) / MAX_ITEMS])
    return tf.concat([basket, dense], axis=0), tf.cast(ex["promo"], tf.float32)


def make_model():
    inp = keras.Input((SKU_BUCKETS + 6,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def run(ds):
    keras.utils.set_random_seed(43)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    root = tempfile.mkdtemp(prefix="u84_input_shardedrecs_tillreceipts_")
    try:
        write_receipts(root, 47)
        files = tf.data.Dataset.list_files(os.path.join(root, "*.tfrecord"), shuffle=True, seed=3)
        ds = (tf.data.TFRecordDataset(files)
              .map(parse_receipt)
              .batch(BATCH)
              .repeat())
        full = run(ds)
        emit({"steps_per_second": 1.0 / full})
        print(f"tillreceipts: {full * 1000:.1f} ms/step, wall {time.perf_counter() - T0:.1f} s")
        if TRUTH:
            one = next(iter(ds))
            compute = run(tf.data.Dataset.from_tensors(one).repeat())
            frac = input_fraction(full, compute)
            emit({"truth_input_fraction": frac})
            print(f"tillreceipts truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
