import time; T0 = time.perf_counter()
import os
import sys
import json
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


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

# Light-list catalogue: every light-list entry (one navigation light) is exported as
# its own tiny ZLIB-compressed TFRecord file holding two records (the night and day
# survey of that light): a PNG of the sector diagram, the catalogue text line
# ("No. 1234 Fl(3) W 15s 42m 18M ...") and the raw photometer sweep as bytes.
# tf.data lists the hundreds of files and parses each record with heavy per-record
# work (PNG decode, resize, string split/number parsing, decode_raw + FFT), serially.
# Label: light characteristic family.

import tempfile
import shutil

BATCH = 32
STEPS_PER_EPOCH = 40
EPOCHS = 4
N_FILES = 480
RECS_PER_FILE = 2
IMG = 144
SWEEP = 16384
N_CLASS = 6
FAMILIES = ["Fl", "LFl", "Oc", "Iso", "Q", "Mo"]


def write_catalogue(root):
    rng = np.random.default_rng(97)
    opts = tf.io.TFRecordOptions(compression_type="ZLIB")
    for f in range(N_FILES):
        path = os.path.join(root, f"lightlist_{f:05d}.tfrecord")
        with tf.io.TFRecordWriter(path, opts) as w:
            for r in range(RECS_PER_FILE):
                c = int(rng.integers(N_CLASS))
                yy, xx = np.mgrid[0:IMG, 0:IMG]
                ang = np.arctan2(yy - IMG / 2, xx - IMG / 2)
                img = np.zeros((IMG, IMG, 3), np.uint8)
                for s in range(c + 1):
                    a0 = rng.uniform(-3.1, 3.1)
                    img[(ang > a0) & (ang < a0 + 0.6), s % 3] = 220
                img = np.clip(img + rng.integers(0, 30, img.shape), 0, 255).astype(np.uint8)
                png = tf.io.encode_png(img).numpy()
                text = (f"No. {int(rng.integers(1000, 9999))} {FAMILIES[c]}({int(rng.integers(1, 5))}) "
                        f"{'WRG'[int(rng.integers(3))]} {int(rng.integers(2, 30))}s "
                        f"{int(rng.integers(5, 120))}m {int(rng.integers(3, 28))}M "
                        f"{rng.uniform(49, 61):.4f} {rng.uniform(-11, 2):.4f}")
                sweep = (np.sin(np.arange(SWEEP) * (0.01 + 0.02 * c)) + rng.normal(0, 0.3, SWEEP)).astype(np.float32)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "sector_png": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
                    "entry": tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()])),
                    "sweep": tf.train.Feature(bytes_list=tf.train.BytesList(value=[sweep.tobytes()])),
                    "family": tf.train.Feature(int64_list=tf.train.Int64List(value=[c])),
                }))
                w.write(ex.SerializeToString())


SPEC = {
    "sector_png": tf.io.FixedLenFeature([], tf.string),
    "entry": tf.io.FixedLenFeature([], tf.string),
    "sweep": tf.io.FixedLenFeature([], tf.string),
    "family": tf.io.FixedLenFeature([], tf.int64),
}


def parse_record(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    img = tf.io.decode_png(ex["sector_png"], channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.resize(img, (64, 64), method="bicubic")
    img = tf.image.adjust_contrast(img, 1.3)
    parts = tf.strings.split(ex["entry"], " ")
    nums = tf.strings.to_number(tf.strings.regex_replace(tf.concat([parts[1:2], parts[4:]], 0), "[^0-9.\\-]", ""), tf.float32)
    sweep = tf.io.decode_raw(ex["sweep"], tf.float32)
    spec = tf.abs(tf.signal.rfft(tf.reshape(sweep, (16, SWEEP // 16))))
    spec = tf.reduce_mean(tf.math.log1p(spec), axis=0)[:128]
    aux = tf.concat([nums[:6] / 100.0, spec], axis=0)
    return (img, aux), ex["family"]


def make_dataset(root):
    files = tf.data.Dataset.list_files(os.path.join(root, "*.tfrecord"), shuffle=False)
    ds = files.repeat().interleave(lambda f: tf.data.TFRecordDataset(f, compression_type="ZLIB"),
                                   cycle_length=1, block_length=RECS_PER_FILE)
    ds = ds.map(parse_record)  # serial
    return ds.batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(4)
    img_in = keras.Input((64, 64, 3))
    aux_in = keras.Input((134,))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(img_in)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    a = keras.layers.Dense(64, activation="relu")(aux_in)
    h = keras.layers.Concatenate()([x, a])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(N_CLASS)(h)
    m = keras.Model([img_in, aux_in], out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


root = tempfile.mkdtemp(prefix="u97_input_tinyfilerecs_lightcat_")
try:
    write_catalogue(root)
    print(f"[lightcat] wrote {N_FILES} tiny TFRecord files in {time.perf_counter()-T0:.1f} s since start")
    full = train(make_dataset(root))
    emit({"steps_per_second": 1.0 / full})
    print(f"[lightcat] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")
    if TRUTH:
        one = next(iter(make_dataset(root)))
        compute = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[lightcat] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
finally:
    shutil.rmtree(root, ignore_errors=True)
