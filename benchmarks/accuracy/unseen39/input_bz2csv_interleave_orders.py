"""Late-delivery prediction for a marketplace from bz2-compressed CSV order exports.

The order service dumps daily CSV shards compressed with bzip2; tf.data
interleaves one Dataset.from_generator per shard (sequential, cycle_length=4),
each generator streaming through bz2.open + csv.DictReader, parsing timestamps
and prices and one-hot encoding carrier/region/category for model.fit.
"""
import os, sys, json, time, tempfile, shutil, bz2, csv, io
from datetime import datetime, timezone
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 256, 90, 2
N_SHARDS, ROWS = 8, 5000
CARRIERS = ["UPS", "FEDEX", "DHL", "USPS", "ONTRAC", "LASERSHIP"]
REGIONS = ["NE", "SE", "MW", "SW", "W", "NW", "PR", "AK"]
CATS = ["books", "toys", "grocery", "apparel", "electronics", "home", "garden", "beauty", "sports", "auto"]
FIELDS = ["order_id", "created_at", "promised_at", "carrier", "region", "category",
          "price", "weight_kg", "items", "seller_rating", "late"]


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def write_shards(tmp, rng):
    paths = []
    for s in range(N_SHARDS):
        p = os.path.join(tmp, f"orders_2025-03-{s + 1:02d}.csv.bz2")
        with bz2.open(p, "wt", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            for r in range(ROWS):
                created = 1740787200 + s * 86400 + int(rng.integers(0, 86400))
                promised = created + int(rng.integers(1, 6)) * 86400
                c, g = int(rng.integers(0, 6)), int(rng.integers(0, 8))
                price = float(rng.lognormal(3, 1))
                rating = float(rng.uniform(2.5, 5))
                late = int(rng.random() < 0.1 + 0.05 * c / 5 + 0.1 * (rating < 3.2))
                w.writerow([f"ORD{s:02d}{r:06d}",
                            datetime.fromtimestamp(created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                            datetime.fromtimestamp(promised, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                            CARRIERS[c], REGIONS[g], CATS[int(rng.integers(0, 10))],
                            f"{price:.2f}", f"{rng.gamma(2, 1.5):.3f}", int(rng.integers(1, 9)),
                            f"{rating:.2f}", late])
        paths.append(p)
    return paths


def read_shard(path):
    path = path.decode() if isinstance(path, bytes) else path
    with bz2.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            ca = datetime.strptime(row["created_at"], "%Y-%m-%dT%H:%M:%SZ")
            pa = datetime.strptime(row["promised_at"], "%Y-%m-%dT%H:%M:%SZ")
            feat = [(pa - ca).total_seconds() / 432000.0, ca.hour / 23.0, ca.weekday() / 6.0,
                    np.log1p(float(row["price"])) / 8.0, float(row["weight_kg"]) / 10.0,
                    int(row["items"]) / 8.0, float(row["seller_rating"]) / 5.0]
            feat += [float(row["carrier"] == c) for c in CARRIERS]
            feat += [float(row["region"] == c) for c in REGIONS]
            feat += [float(row["category"] == c) for c in CATS]
            yield np.asarray(feat, np.float32), np.float32(row["late"])


NFEAT = 7 + len(CARRIERS) + len(REGIONS) + len(CATS)


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_bz2csv_interleave_orders_")
    try:
        paths = write_shards(tmp, rng)
        sig = (tf.TensorSpec((NFEAT,), tf.float32), tf.TensorSpec((), tf.float32))
        ds = (tf.data.Dataset.from_tensor_slices(paths).repeat()
              .interleave(lambda p: tf.data.Dataset.from_generator(read_shard, args=(p,),
                                                                   output_signature=sig),
                          cycle_length=4, block_length=16)
              .batch(BATCH).prefetch(2))
        model = build_model()
        st = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_bz2csv_interleave_orders: {1.0/full:.1f} steps/s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
