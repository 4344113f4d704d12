import time; T0 = time.perf_counter()
"""Sheet thickness gauge readings -> paper stock.  Each caliper sweep across one
sheet is logged by the gauge as its own tiny TFRecord file (two records per
file, hundreds of files).  tf.data lists the files, reads them, and parses every
record: the readings arrive as a unit-suffixed text string that is cleaned,
split and converted to numbers before a profile summary is computed."""
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

N_FILES = 600
RECS_PER_FILE = 2
READINGS = 2304          # caliper points per sweep
SEGS = 48                # profile segments after parsing
STOCKS = ["kami_70gsm", "washi_45gsm", "tant_80gsm", "elephant_hide_110gsm", "foil_60gsm"]
BATCH = 32
STEPS = 100
EPOCHS = 8

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
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))

def write_gauge_files(root):
    rng = np.random.default_rng(98)
    base_mm = np.array([0.090, 0.060, 0.105, 0.140, 0.075])
    for i in range(N_FILES):
        path = os.path.join(root, f"gauge_sweep_{i:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for r in range(RECS_PER_FILE):
                stock = int(rng.integers(len(STOCKS)))
                x = np.linspace(0, 1, READINGS)
                mm = (base_mm[stock] + 0.004 * np.sin(2 * np.pi * x * (3 + stock))
                      + rng.normal(0, 0.003, READINGS))
                text = ";".join(f"{v:.4f}mm" for v in mm)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "sheet_id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"S{i:05d}-{r}".encode()])),
                    "stock": tf.train.Feature(bytes_list=tf.train.BytesList(value=[STOCKS[stock].encode()])),
                    "readings": tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()])),
                    "room_rh": tf.train.Feature(float_list=tf.train.FloatList(value=[float(rng.uniform(35, 65))])),
                }))
                w.write(ex.SerializeToString())

FEATURES = {
    "sheet_id": tf.io.FixedLenFeature([], tf.string),
    "stock": tf.io.FixedLenFeature([], tf.string),
    "readings": tf.io.FixedLenFeature([], tf.string),
    "room_rh": tf.io.FixedLenFeature([], tf.float32),
}
STOCK_TABLE = tf.lookup.StaticHashTable(
    tf.lookup.KeyValueTensorInitializer(tf.constant(STOCKS), tf.range(len(STOCKS), dtype=tf.int64)), -1)

def parse_sweep(serialized):
    ex = tf.io.parse_single_example(serialized, FEATURES)
    text = tf.strings.regex_replace(ex["readings"], "mm", "")
    vals = tf.strings.to_number(tf.strings.split(text, ";"), tf.float32)
    vals = tf.reshape(vals, [READINGS])
    vals = (vals - tf.reduce_mean(vals)) / (tf.math.reduce_std(vals) + 1e-6)
    segs = tf.reshape(vals, [SEGS, READINGS // SEGS])
    prof = tf.stack([tf.reduce_mean(segs, 1), tf.math.reduce_std(segs, 1),
                     tf.reduce_max(segs, 1) - tf.reduce_min(segs, 1)], axis=1)
    rh = tf.fill([SEGS, 1], (ex["room_rh"] - 50.0) / 10.0)
    return tf.concat([prof, rh], axis=1), STOCK_TABLE.lookup(ex["stock"])

def make_dataset(root, seed):
    files = tf.data.Dataset.list_files(os.path.join(root, "gauge_sweep_*.tfrecord"), shuffle=True, seed=seed)
    ds = files.repeat().interleave(tf.data.TFRecordDataset, cycle_length=1)
    ds = ds.map(parse_sweep)
    return ds.batch(BATCH).prefetch(1)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((SEGS, 4)),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(len(STOCKS)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    print(f"  fit {time.perf_counter()-t:.1f} s, sum gaps {sum(timer.gaps):.1f} s")
    return timer.seconds_per_step(), hist.history["loss"][-1]

root = tempfile.mkdtemp(prefix="u98_input_onefilerecs_caliperreads_")
try:
    t = time.perf_counter()
    write_gauge_files(root)
    print(f"  wrote {N_FILES} gauge files in {time.perf_counter()-t:.1f} s")
    full_s, loss = train(make_dataset(root, seed=98))
    emit({"steps_per_second": 1.0 / full_s})
    print(f"caliperreads: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
          f"wall {time.perf_counter()-T0:.1f} s")
    if TRUTH:
        xb, yb = next(iter(make_dataset(root, seed=7)))
        fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        comp_s, _ = train(fixed)
        frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"caliperreads truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
finally:
    shutil.rmtree(root, ignore_errors=True)
