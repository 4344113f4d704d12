import time
WALL0 = time.perf_counter()
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Building-element classification from IFC (STEP) text exports.

Eight IFC-like STEP shard files (one per construction site model) are written
to a temp dir. tf.data interleaves TextLineDataset readers over the shards
(cycle_length=4), filters entity lines, batches raw lines and maps a
tf.py_function that parses each STEP entity with regular expressions (entity
type, GUID, name, storey reference, placement coordinates, quantity sets with
length/width/height/area/volume, a 40-entry property set, the
compressed GUID, material string hashed into buckets);
model.fit trains an MLP that predicts the element class from the parsed
attributes (without the entity type). Bottleneck: the Python regex parsing in
the tf.py_function map.
"""
import re
import zlib

SEED = 58
BATCH = 256
STEPS = 40
EPOCHS = 3
N_SHARDS = 8
LINES_PER_SHARD = 2500
TYPES = ["IFCWALL", "IFCSLAB", "IFCBEAM", "IFCCOLUMN", "IFCDOOR", "IFCWINDOW", "IFCSTAIR", "IFCROOF"]
MATS = ["Concrete C30/37", "Steel S355", "Glulam GL24h", "Brick", "Glass", "Aluminium", "Gypsum"]
N_MAT = 16
N_PROPS = 40
FEAT = 14 + N_MAT

rng = np.random.default_rng(SEED)


def make_shard(path, s, r):
    with open(path, "w") as fh:
        fh.write("ISO-10303-21;\nHEADER;\nFILE_NAME('site%02d.ifc');\nENDSEC;\nDATA;\n" % s)
        for k in range(LINES_PER_SHARD):
            t = int(r.integers(0, len(TYPES)))
            dims = r.uniform(0.1, 1.0, 3) * (t + 1)
            x, y, z = r.uniform(-50, 50), r.uniform(-50, 50), 3.2 * int(r.integers(0, 12))
            mat = MATS[(t + int(r.integers(0, 2))) % len(MATS)]
            guid = "".join(r.choice(list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ$_"), 22))
            fh.write(f"#{k * 10 + 7}={TYPES[t]}('{guid}',#2,'E-{k:05d}',$,$,"
                     f"IFCLOCALPLACEMENT(#{3 + z // 3.2:.0f},IFCAXIS2PLACEMENT3D(IFCCARTESIANPOINT(({x:.3f},{y:.3f},{z:.3f})))),"
                     f"$,QTO((LENGTH,{dims[0]:.4f}),(WIDTH,{dims[1]:.4f}),(HEIGHT,{dims[2]:.4f}),"
                     f"(AREA,{dims[0] * dims[2]:.4f}),(VOLUME,{dims.prod():.5f})),MAT('{mat}'),PSET("
                     + ",".join(f"(P{j:02d},{v:.4f})" for j, v in enumerate(r.normal(t, 1.0, N_PROPS)))
                     + "));\n")
        fh.write("ENDSEC;\nEND-ISO-10303-21;\n")


ENT_RE = re.compile(r"^#(\d+)=(IFC[A-Z]+)\('([0-9A-Z$_]{22})',#\d+,'([^']*)'")
PT_RE = re.compile(r"IFCCARTESIANPOINT\(\(([-\d.]+),([-\d.]+),([-\d.]+)\)\)")
STOREY_RE = re.compile(r"IFCLOCALPLACEMENT\(#(\d+)")
QTO_RE = re.compile(r"\((LENGTH|WIDTH|HEIGHT|AREA|VOLUME),([-\d.eE]+)\)")
MAT_RE = re.compile(r"MAT\('([^']*)'\)")
PROP_RE = re.compile(r"\(P(\d\d),([-\d.eE]+)\)")
B64 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$"


def guid_to_int(g):
    # IFC compressed GUID: 22 chars of a 64-symbol alphabet
    v = 0
    for ch in g:
        v = v * 64 + B64.index(ch)
    return v
QIDX = {"LENGTH": 0, "WIDTH": 1, "HEIGHT": 2, "AREA": 3, "VOLUME": 4}


def parse_lines(lines):
    lines = lines.numpy()
    xs = np.zeros((len(lines), FEAT), np.float32)
    ys = np.zeros((len(lines),), np.int32)
    for i, raw in enumerate(lines):
        s = raw.decode("utf-8")
        m = ENT_RE.match(s)
        if not m:
            continue
        ys[i] = TYPES.index(m.group(2))
        pt = PT_RE.search(s)
        if pt:
            xs[i, 5:8] = [float(pt.group(1)) / 50, float(pt.group(2)) / 50, float(pt.group(3)) / 40]
        st = STOREY_RE.search(s)
        xs[i, 8] = float(st.group(1)) / 15 if st else 0.0
        for key, val in QTO_RE.findall(s):
            xs[i, QIDX[key]] = np.log1p(float(val))
        mat = MAT_RE.search(s)
        if mat:
            xs[i, 10 + zlib.crc32(mat.group(1).encode()) % N_MAT] = 1.0
        xs[i, 9] = len(m.group(4)) / 10.0
        props = {}
        for key, val in PROP_RE.findall(s):
            props[int(key)] = float(val)
        pv = [props[k] for k in sorted(props)]
        if pv:
            mu = sum(pv) / len(pv)
            xs[i, 10 + N_MAT] = mu / 8.0
            xs[i, 11 + N_MAT] = (sum((v - mu) ** 2 for v in pv) / len(pv)) ** 0.5
            xs[i, 12 + N_MAT] = max(pv) / 8.0
        xs[i, 13 + N_MAT] = (guid_to_int(m.group(3)) % 97) / 97.0
    return xs, ys


def tf_parse(lines):
    x, y = tf.py_function(parse_lines, [lines], (tf.float32, tf.int32))
    x.set_shape((None, FEAT))
    y.set_shape((None,))
    return x, y


def make_ds(files):
    ds = tf.data.Dataset.from_tensor_slices(files).repeat()
    ds = ds.interleave(tf.data.TextLineDataset, cycle_length=4, block_length=16)
    ds = ds.filter(lambda l: tf.strings.regex_full_match(l, "#.*"))
    return ds.batch(BATCH, drop_remainder=True).map(tf_parse).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(len(TYPES), activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


tmp = tempfile.mkdtemp(prefix="u58_input_ifcregex_interleave_buildingelements_")
try:
    files = []
    for s in range(N_SHARDS):
        p = os.path.join(tmp, "site%02d.ifc" % s)
        make_shard(p, s, rng)
        files.append(p)
    print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
    full = run(make_ds(files))
    emit({"steps_per_second": 1.0 / full})
    print(f"input_ifcregex_interleave_buildingelements: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-WALL0:.1f} s")
    if TRUTH:
        batch = next(iter(make_ds(files)))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        emit_truth(full, compute)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
