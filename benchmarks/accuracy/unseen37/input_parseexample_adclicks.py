"""Ad click-through prediction from serialized tf.train.Example protos.

Impressions are serialized to tf.train.Example byte strings and kept in memory
(no files).  tf.data slices the byte strings, batches them, and a single serial
map runs tf.io.parse_example on each batch followed by feature engineering:
strong string hashing of ids, hashed feature crosses built with tf.strings.join,
ragged query-token and click-history bags turned into hashed multi-hot vectors,
and bucketized numeric fields.  The model trains with model.fit.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 256
STEPS = 150
EPOCHS = 3
N_IMPRESSIONS = 12000
ID_BUCKETS = 20000
CROSS_BUCKETS = 5000
BAG = 1024
SPEC = {
    "user_id": tf.io.FixedLenFeature([], tf.string),
    "ad_id": tf.io.FixedLenFeature([], tf.string),
    "site": tf.io.FixedLenFeature([], tf.string),
    "device": tf.io.FixedLenFeature([], tf.string),
    "hour": tf.io.FixedLenFeature([], tf.int64),
    "bid": tf.io.FixedLenFeature([], tf.float32),
    "query": tf.io.VarLenFeature(tf.string),
    "history": tf.io.VarLenFeature(tf.int64),
    "clicked": tf.io.FixedLenFeature([], tf.int64),
}
WORDS = ["cheap", "flight", "hotel", "shoes", "running", "phone", "case", "laptop", "deal", "near", "me",
         "best", "pizza", "insurance", "car", "rental", "sale", "black", "friday", "gift", "book", "kids"]


def make_serialized(seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_IMPRESSIONS):
        site = "site%d" % rng.integers(0, 300)
        device = str(rng.choice(["ios", "android", "desktop", "tv"]))
        q = [str(w).encode() for w in rng.choice(WORDS, size=rng.integers(1, 12))]
        hist = rng.integers(0, 50000, size=rng.integers(0, 60)).tolist()
        bid = float(rng.gamma(2.0, 0.5))
        p = 1 / (1 + np.exp(-(0.8 * bid - 1.5 + (device == "ios") * 0.5 + 0.02 * len(hist) - 0.5)))
        f = {
            "user_id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"u%d" % rng.integers(0, 100000)])),
            "ad_id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ad%d" % rng.integers(0, 5000)])),
            "site": tf.train.Feature(bytes_list=tf.train.BytesList(value=[site.encode()])),
            "device": tf.train.Feature(bytes_list=tf.train.BytesList(value=[device.encode()])),
            "hour": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.integers(0, 24))])),
            "bid": tf.train.Feature(float_list=tf.train.FloatList(value=[bid])),
            "query": tf.train.Feature(bytes_list=tf.train.BytesList(value=q)),
            "history": tf.train.Feature(int64_list=tf.train.Int64List(value=hist)),
            "clicked": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.random() < p)])),
        }
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


def hashed_bag(ragged_strings, buckets, key):
    ids = tf.ragged.map_flat_values(tf.strings.to_hash_bucket_strong, ragged_strings, buckets, key)
    return tf.reduce_sum(tf.one_hot(ids, buckets), axis=1)


def featurize(serialized):
    ex = tf.io.parse_example(serialized, SPEC)
    hour_s = tf.strings.as_string(ex["hour"])
    ids = tf.stack([
        tf.strings.to_hash_bucket_strong(ex["user_id"], ID_BUCKETS, [1, 2]),
        tf.strings.to_hash_bucket_strong(ex["ad_id"], ID_BUCKETS, [3, 4]),
        tf.strings.to_hash_bucket_strong(ex["site"], ID_BUCKETS, [5, 6]),
    ], axis=1)
    crosses = tf.stack([
        tf.strings.to_hash_bucket_strong(tf.strings.join([ex["site"], ex["device"]], "_x_"), CROSS_BUCKETS, [7, 8]),
        tf.strings.to_hash_bucket_strong(tf.strings.join([ex["ad_id"], hour_s], "_x_"), CROSS_BUCKETS, [9, 10]),
        tf.strings.to_hash_bucket_strong(tf.strings.join([ex["device"], hour_s, ex["ad_id"]], "_x_"),
                                         CROSS_BUCKETS, [11, 12]),
    ], axis=1)
    query = tf.RaggedTensor.from_sparse(ex["query"])
    bigrams = tf.strings.ngrams(query, 2, separator=" ")
    hist = tf.strings.as_string(tf.RaggedTensor.from_sparse(ex["history"]))
    bags = tf.concat([hashed_bag(query, BAG, [13, 14]), hashed_bag(bigrams, BAG, [15, 16]),
                      hashed_bag(hist, BAG, [17, 18])], axis=1)
    bid = ex["bid"]
    numeric = tf.concat([
        tf.stack([tf.math.log1p(bid), tf.cast(query.row_lengths(), tf.float32) / 12.0,
                  tf.cast(hist.row_lengths(), tf.float32) / 60.0], axis=1),
        tf.one_hot(tf.raw_ops.Bucketize(input=bid, boundaries=[0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]), 9),
        tf.one_hot(ex["hour"], 24),
    ], axis=1)
    return (ids, crosses, bags, numeric), tf.cast(ex["clicked"], tf.float32)


def make_dataset(serialized):
    ds = tf.data.Dataset.from_tensor_slices(serialized).shuffle(8192, seed=0).repeat()
    return ds.batch(BATCH, drop_remainder=True).map(featurize)


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    ids = keras.Input((3,), dtype="int64")
    crosses = keras.Input((3,), dtype="int64")
    bags = keras.Input((3 * BAG,))
    numeric = keras.Input((36,))
    e1 = keras.layers.Flatten()(keras.layers.Embedding(ID_BUCKETS, 32)(ids))
    e2 = keras.layers.Flatten()(keras.layers.Embedding(CROSS_BUCKETS, 16)(crosses))
    b = keras.layers.Dense(128, activation="relu")(bags)
    h = keras.layers.Concatenate()([e1, e2, b, numeric])
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    return keras.Model([ids, crosses, bags, numeric], keras.layers.Dense(1)(h))


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.AUC(from_logits=True, name="auc")])
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_input_parseexample_adclicks_")
    try:
        t0 = time.perf_counter()
        serialized = make_serialized()
        full, hist = train(make_dataset(serialized))
        emit("steps_per_second", 1.0 / full)
        msg = "input_parseexample_adclicks: %.1f ms/step, auc %.3f" % (full * 1e3, hist["auc"][-1])
        if args.truth:
            batch = next(iter(make_dataset(serialized)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
