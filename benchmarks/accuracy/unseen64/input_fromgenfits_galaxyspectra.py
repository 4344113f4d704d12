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

# Galaxy spectra survey: each record is a FITS-like blob (2880-byte ASCII header of
# 80-char cards, big-endian int16 flux array, ASCII line-measurement table). A Python
# generator parses every record, applies BSCALE/BZERO, redshift-corrects and rebins
# the spectrum, masks emission lines, and augments; tf.data.Dataset.from_generator
# feeds model.fit. Bottleneck: the Python-side decoding in the generator.
BATCH = 32
STEPS = 30
EPOCHS = 2
NPIX = 512
N_REC = 400
N_LINES = 32
rng0 = np.random.default_rng(64001)
LINE_NAMES = ["HALPHA", "HBETA", "OIII5007", "OIII4959", "NII6583", "SII6716", "SII6731", "OII3727"]


def make_record(i, rng):
    z = float(rng.uniform(0.0, 0.3))
    bscale, bzero = 0.01, 32768.0 * 0.01
    cards = ["SIMPLE  =                    T", "BITPIX  =                   16", "NAXIS   =                    1",
             "NAXIS1  = %20d" % NPIX, "BSCALE  = %20.6f" % bscale, "BZERO   = %20.6f" % bzero,
             "CRVAL1  = %20.4f" % 3600.0, "CDELT1  = %20.4f" % 3.5, "Z       = %20.6f" % z,
             "OBJID   = '%016d'" % i, "CLASS   = %20d" % int(rng.integers(0, 4))]
    while len(cards) < 36:
        cards.append("COMMENT   survey pipeline v5.4 card %d" % len(cards))
    cards[-1] = "END"
    header = "".join(c.ljust(80) for c in cards).encode("ascii")
    flux = (rng.normal(1.0, 0.2, NPIX) + np.sin(np.arange(NPIX) / 40.0)) / bscale
    raw = np.clip(flux + 0.0, -32000, 32000).astype(">i2").tobytes()
    rows = []
    for k in range(N_LINES):
        nm = LINE_NAMES[k % len(LINE_NAMES)]
        rows.append("%-10s %10.3f %9.4f %9.4f %8.3f %8.3f" % (nm, 3700 + 70.0 * k, rng.normal(5, 2), rng.uniform(0.1, 1), rng.normal(2, 0.5), rng.uniform(0, 1)))
    table = "\n".join(rows).encode("ascii")
    return header + raw + table


def parse_record(blob, rng):
    hdr = {}
    for j in range(36):
        card = blob[80 * j: 80 * (j + 1)].decode("ascii")
        key = card[:8].strip()
        if key == "END":
            break
        if card[8:10] == "= ":
            val = card[10:].split("/")[0].strip()
            if val.startswith("'"):
                hdr[key] = val.strip("'")
            elif val in ("T", "F"):
                hdr[key] = val == "T"
            elif "." in val:
                hdr[key] = float(val)
            else:
                hdr[key] = int(val)
    n = hdr["NAXIS1"]
    data = np.frombuffer(blob, dtype=">i2", count=n, offset=2880).astype(np.float32)
    flux = data * hdr["BSCALE"] + hdr["BZERO"] - 327.68
    wave = hdr["CRVAL1"] + hdr["CDELT1"] * np.arange(n)
    rest = wave / (1.0 + hdr["Z"] + rng.normal(0, 0.002))
    grid = np.linspace(3000.0, 7000.0, NPIX)
    spec = np.interp(grid, rest, flux)
    feats = []
    for line in blob[2880 + 2 * n:].decode("ascii").split("\n"):
        parts = line.split()
        vals = [float(p) for p in parts[1:]]
        centre = vals[0]
        lo, hi = int((centre - 3000.0) / 3.91), int((centre - 3000.0) / 3.91) + 4
        if 0 <= lo < NPIX:
            spec[lo:hi] = np.median(spec[max(0, lo - 8):lo + 8])
        feats.append(vals[1] * vals[2])
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    spec = spec + rng.normal(0, 0.05, NPIX)
    return spec.astype(np.float32)[:, None], np.int32(hdr["CLASS"])


RECORDS = [make_record(i, rng0) for i in range(N_REC)]


def gen():
    rng = np.random.default_rng(7)
    while True:
        for idx in rng.permutation(N_REC):
            yield parse_record(RECORDS[idx], rng)


def make_ds():
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((NPIX, 1), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([
        keras.Input((NPIX, 1)),
        keras.layers.Conv1D(32, 9, strides=2, activation="relu"),
        keras.layers.Conv1D(64, 7, strides=2, activation="relu"),
        keras.layers.Conv1D(64, 5, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(4),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print("galaxyspectra fromgen fit: %.4f s/step, %.2f steps/s, wall %.1f s" % (full, 1.0 / full, time.perf_counter() - WALL0))
if TRUTH:
    batch = next(iter(make_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
