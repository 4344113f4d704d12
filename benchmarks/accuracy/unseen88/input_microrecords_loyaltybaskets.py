"""Cosmetics-store loyalty baskets -> next product category bought.

Each till exports every basket as its own tiny TFRecord file (a few records
per file).  tf.data lists the files, reads them with TFRecordDataset and
parses every record one at a time: parse_single_example, splitting the
'|'-joined SKU / quantity / price strings, string->number conversion, SKU
hashing and timestamp slicing, before batching into model.fit.
"""
import time; T0 = time.perf_counter()
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


BATCH, STEPS, EPOCHS = 256, 110, 4
N_FILES, PER_FILE, MAX_ITEMS, HASH = 1200, 3, 12, 4096
CATS = ["LIP", "EYE", "SKN", "FRG", "NAL", "HAR", "SUN", "BTH"]
STORES = ["PAR-04", "LYO-01", "MIL-07", "LON-12", "NYC-03", "TOK-02"]


def _bytes(v):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))


def write_baskets(root, seed=88):
    rng = np.random.default_rng(seed)
    for f in range(N_FILES):
        with tf.io.TFRecordWriter(os.path.join(root, f"till_{f:05d}.tfrecord")) as w:
            for _ in range(PER_FILE):
                n = int(rng.integers(1, MAX_ITEMS + 1))
                cats = rng.integers(0, len(CATS), n)
                skus = "|".join(f"{CATS[c]}-{int(rng.integers(0, 900)):04d}" for c in cats)
                qty = "|".join(str(int(q)) for q in rng.integers(1, 4, n))
                price = "|".join(f"{p:.2f}" for p in rng.uniform(4, 120, n))
                ts = f"2026-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}T{int(rng.integers(9, 21)):02d}:{int(rng.integers(0, 60)):02d}:00"
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "customer": _bytes(f"C{int(rng.integers(0, 50000)):06d}"),
                    "store": _bytes(STORES[int(rng.integers(0, len(STORES)))]),
                    "tier": _bytes(["bronze", "silver", "gold", "rouge"][int(rng.integers(0, 4))]),
                    "skus": _bytes(skus), "qty": _bytes(qty), "price": _bytes(price),
                    "ts": _bytes(ts),
                    "next_cat": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(np.bincount(cats).argmax())])),
                }))
                w.write(ex.SerializeToString())


SPEC = {k: tf.io.FixedLenFeature([], tf.string) for k in ("customer", "store", "tier", "skus", "qty", "price", "ts")}
SPEC["next_cat"] = tf.io.FixedLenFeature([], tf.int64)


def parse_basket(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    skus = tf.strings.split(ex["skus"], "|")
    sku_ids = tf.strings.to_hash_bucket_fast(skus, HASH)
    cat_ids = tf.strings.to_hash_bucket_fast(tf.strings.substr(skus, 0, 3), 64)
    qty = tf.strings.to_number(tf.strings.split(ex["qty"], "|"))
    price = tf.strings.to_number(tf.strings.split(ex["price"], "|"))
    spend = tf.reduce_sum(qty * price)
    hour = tf.strings.to_number(tf.strings.substr(ex["ts"], 11, 2))
    month = tf.strings.to_number(tf.strings.substr(ex["ts"], 5, 2))
    cust = tf.strings.to_number(tf.strings.regex_replace(ex["customer"], "^C0*", ""))
    store = tf.strings.to_hash_bucket_fast(ex["store"], 32)
    tier = tf.strings.to_hash_bucket_fast(tf.strings.upper(ex["tier"]), 8)
    n = tf.size(skus)
    pad = MAX_ITEMS - n
    items = tf.pad(sku_ids, [[0, pad]])
    cats = tf.pad(cat_ids, [[0, pad]])
    num = tf.stack([tf.math.log1p(spend) / 5.0, hour / 24.0, month / 12.0,
                    tf.cast(n, tf.float32) / MAX_ITEMS, tf.math.floormod(cust, 97.0) / 97.0,
                    tf.cast(store, tf.float32) / 32.0, tf.cast(tier, tf.float32) / 8.0])
    items.set_shape((MAX_ITEMS,)); cats.set_shape((MAX_ITEMS,))
    return (items, cats, num), ex["next_cat"]


def build_model():
    keras.utils.set_random_seed(88)
    items = keras.Input((MAX_ITEMS,), dtype="int64")
    cats = keras.Input((MAX_ITEMS,), dtype="int64")
    num = keras.Input((7,))
    e1 = layers.GlobalAveragePooling1D()(layers.Embedding(HASH, 48)(items))
    e2 = layers.GlobalAveragePooling1D()(layers.Embedding(64, 16)(cats))
    h = layers.Concatenate()([e1, e2, num])
    h = layers.Dense(768, activation="relu")(h)
    h = layers.Dense(512, activation="relu")(h)
    h = layers.Dense(256, activation="relu")(h)
    m = keras.Model([items, cats, num], layers.Dense(len(CATS))(h))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


root = tempfile.mkdtemp(prefix="u88_input_microrecords_loyaltybaskets_")
try:
    write_baskets(root)
    files = tf.data.Dataset.list_files(os.path.join(root, "till_*.tfrecord"), shuffle=True, seed=88)
    ds = (tf.data.TFRecordDataset(files).map(parse_basket)
          .batch(BATCH, drop_remainder=True).repeat().prefetch(1))
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[loyaltybaskets] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) wall {time.perf_counter() - T0:.1f}s")

    if TRUTH:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        F = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": F})
        print(f"[loyaltybaskets] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
finally:
    shutil.rmtree(root, ignore_errors=True)
