import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

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

# Reanalysis wind fields packed as GRIB-like messages: section headers read with
# struct, values stored with simple packing (reference value, binary/decimal scale,
# 12-bit integers). A tf.data pipeline maps tf.numpy_function over message ids; the
# Python decoder unpacks bits, rescales, rotates grid-relative u/v to earth-relative
# row by row, and derives speed/direction. model.fit trains a small CNN that predicts
# a storm-track class.
import struct
BATCH = 16
STEPS = 30
EPOCHS = 2
NY, NX = 32, 32
N_MSG = 300
rng0 = np.random.default_rng(64003)


def pack_field(field, rng):
    ref = float(field.min())
    bscale = 2
    ints = np.round((field - ref) * (2 ** -bscale) * 100).astype(np.int64)
    ints = np.clip(ints, 0, 4095)
    flat = ints.ravel()
    if flat.size % 2:
        flat = np.append(flat, 0)
    a, b = flat[0::2], flat[1::2]
    by = np.stack([a >> 4, ((a & 15) << 4) | (b >> 8), b & 255], 1).astype(np.uint8).tobytes()
    sec = struct.pack(">4sIfhhHH", b"GRIB", len(by), ref, bscale, 2, NY, NX)
    return sec + by


def make_msg(i, rng):
    yy, xx = np.mgrid[0:NY, 0:NX]
    cx, cy = rng.uniform(5, 27, 2)
    r2 = (xx - cx) ** 2 + (yy - cy) ** 2
    u = -(yy - cy) * np.exp(-r2 / 60.0) * 3 + rng.normal(0, 0.3, (NY, NX))
    v = (xx - cx) * np.exp(-r2 / 60.0) * 3 + rng.normal(0, 0.3, (NY, NX))
    label = int(cx > 16) + 2 * int(cy > 16)
    return pack_field(u, rng) + pack_field(v, rng), label


MSGS, LABELS = zip(*[make_msg(i, rng0) for i in range(N_MSG)])
HDR = struct.calcsize(">4sIfhhHH")
ROT = np.deg2rad(np.linspace(-12, 12, NX))


def unpack(buf, off):
    magic, nbytes, ref, bscale, dscale, ny, nx = struct.unpack_from(">4sIfhhHH", buf, off)
    assert magic == b"GRIB"
    raw = buf[off + HDR: off + HDR + nbytes]
    vals = []
    for k in range(0, len(raw), 3):  # 12-bit simple packing, two values per 3 bytes
        b0, b1, b2 = raw[k], raw[k + 1], raw[k + 2]
        vals.append((b0 << 4) | (b1 >> 4))
        vals.append(((b1 & 15) << 8) | b2)
    arr = np.array(vals[: ny * nx], np.float32).reshape(ny, nx)
    return ref + arr * (2.0 ** bscale) / (10.0 ** dscale), off + HDR + nbytes


def decode(i):
    buf = MSGS[int(i)]
    u, off = unpack(buf, 0)
    v, _ = unpack(buf, off)
    ue, ve = np.empty_like(u), np.empty_like(v)
    for r in range(NY):
        c, s = np.cos(ROT), np.sin(ROT)
        ue[r] = c * u[r] + s * v[r]
        ve[r] = -s * u[r] + c * v[r]
    spd = np.hypot(ue, ve)
    out = np.stack([ue, ve, spd], -1).astype(np.float32)
    return out, np.int32(LABELS[int(i)])


def make_ds(seed=5):
    ds = tf.data.Dataset.range(N_MSG).shuffle(N_MSG, seed=seed).repeat()

    def tf_decode(i):
        x, y = tf.numpy_function(decode, [i], (tf.float32, tf.int32))
        x.set_shape((NY, NX, 3))
        y.set_shape(())
        return x, y

    return ds.map(tf_decode).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((NY, NX, 3)), keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Conv2D(64, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print("reanalysiswinds numpy_function fit: %.4f s/step, %.2f steps/s, wall %.1f s" % (full, 1.0 / full, time.perf_counter() - WALL0))
if TRUTH:
    batch = next(iter(make_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
