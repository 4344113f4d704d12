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

# Earthquake catalog exported as GeoJSON-lines shards (one event per line, with a list
# of station picks). tf.data interleaves TextLineDataset over the shard files, and a
# tf.py_function map decodes each JSON event in Python: epicentral distances to every
# station, amplitude corrections and a pick-residual histogram. model.fit trains an MLP
# that predicts local magnitude.
import json as _json
import math
BATCH = 32
STEPS = 30
EPOCHS = 2
N_SHARDS = 8
EV_PER_SHARD = 250
N_PICKS = 40
rng0 = np.random.default_rng(64006)


def write_shards(d, rng):
    files = []
    for s in range(N_SHARDS):
        p = os.path.join(d, "catalog_%02d.geojsonl" % s)
        with open(p, "w") as f:
            for e in range(EV_PER_SHARD):
                lon, lat, dep = rng.uniform(-125, -114), rng.uniform(32, 42), rng.uniform(1, 30)
                mag = rng.uniform(1, 6)
                picks = []
                for k in range(N_PICKS):
                    slon, slat = lon + rng.normal(0, 1), lat + rng.normal(0, 1)
                    dist = math.hypot(slon - lon, slat - lat) * 111.0
                    amp = 10 ** (mag - 1.11 * math.log10(dist + 1) - 0.00189 * dist + 2.09 + rng.normal(0, 0.2))
                    picks.append({"sta": "ST%03d" % k, "phase": "P" if k % 3 else "S", "lon": round(slon, 4), "lat": round(slat, 4),
                                  "amp_nm": round(amp, 3), "residual": round(float(rng.normal(0, 0.3)), 3), "weight": round(float(rng.uniform(0.2, 1)), 2)})
                ev = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [round(lon, 4), round(lat, 4), round(dep, 2)]},
                      "properties": {"mag": round(mag, 2), "magType": "ml", "time": 1700000000000 + e, "picks": picks}}
                f.write(_json.dumps(ev) + "\n")
        files.append(p)
    return files


def parse_event(line):
    ev = _json.loads(line.numpy().decode("utf-8"))
    lon, lat, dep = ev["geometry"]["coordinates"]
    feats = []
    hist = [0.0] * 8
    for p in ev["properties"]["picks"]:
        dlat, dlon = math.radians(p["lat"] - lat), math.radians(p["lon"] - lon)
        a = math.sin(dlat / 2) ** 2 + math.cos(math.radians(lat)) * math.cos(math.radians(p["lat"])) * math.sin(dlon / 2) ** 2
        dist = 2 * 6371.0 * math.asin(math.sqrt(a))
        hyp = math.sqrt(dist * dist + dep * dep)
        logamp = math.log10(max(p["amp_nm"], 1e-6))
        feats.append([logamp / 5.0, math.log10(hyp + 1) / 3.0, p["weight"], 1.0 if p["phase"] == "P" else 0.0])
        hist[min(7, max(0, int((p["residual"] + 1.0) * 4)))] += 1.0 / N_PICKS
    feats.sort(key=lambda r: r[1])
    x = np.asarray(feats, np.float32).ravel()
    return np.concatenate([x, np.asarray(hist, np.float32)]), np.float32(ev["properties"]["mag"])


def make_ds(files, seed=4):
    ds = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=seed).repeat()
    ds = ds.interleave(lambda f: tf.data.TextLineDataset(f), cycle_length=4, block_length=4)

    def tf_parse(line):
        x, y = tf.py_function(parse_event, [line], (tf.float32, tf.float32))
        x.set_shape((N_PICKS * 4 + 8,))
        y.set_shape(())
        return x, y

    return ds.map(tf_parse).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((N_PICKS * 4 + 8,)), keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dense(768, activation="relu"), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


tmp = tempfile.mkdtemp(prefix="u64_input_interleavegeojson_quakecatalog_")
try:
    files = write_shards(tmp, rng0)
    full = run(make_ds(files))
    emit({"steps_per_second": 1.0 / full})
    print("quakecatalog interleave+py_function fit: %.4f s/step, %.2f steps/s, wall %.1f s" % (full, 1.0 / full, time.perf_counter() - WALL0))
    if TRUTH:
        batch = next(iter(make_ds(files)))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
