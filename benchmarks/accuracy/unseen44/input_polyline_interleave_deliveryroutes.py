"""Last-mile delivery: predict route duration from the GPS trace of past delivery runs.
Routes are exported by the fleet app as sharded text files, one CSV line per route holding a
Google encoded-polyline string. tf.data lists the shards, interleaves TextLineDatasets, batches
the lines and a tf.py_function map splits them and decodes each polyline character by character
into lat/lon points, resampled with headings and step lengths, before model.fit.
"""
import os, sys, json, time, math, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 96
STEPS = 100
EPOCHS = 4
PTS = 64
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def encode_polyline(coords):
    out, plat, plon = [], 0, 0
    for lat, lon in coords:
        ilat, ilon = int(round(lat * 1e5)), int(round(lon * 1e5))
        for d in (ilat - plat, ilon - plon):
            v = ~(d << 1) if d < 0 else (d << 1)
            while v >= 0x20:
                out.append(chr((0x20 | (v & 0x1F)) + 63))
                v >>= 5
            out.append(chr(v + 63))
        plat, plon = ilat, ilon
    return "".join(out)


def decode_polyline(s):
    coords, i, lat, lon, n = [], 0, 0, 0, len(s)
    while i < n:
        vals = []
        for _ in range(2):
            shift = result = 0
            while True:
                b = ord(s[i]) - 63
                i += 1
                result |= (b & 0x1F) << shift
                shift += 5
                if b < 0x20:
                    break
            vals.append(~(result >> 1) if result & 1 else result >> 1)
        lat += vals[0]
        lon += vals[1]
        coords.append((lat * 1e-5, lon * 1e-5))
    return coords


def write_shards(root, rng, n_shards=8, per_shard=250):
    for s in range(n_shards):
        with open(os.path.join(root, "routes-%03d.csv" % s), "w") as f:
            for r in range(per_shard):
                n = int(rng.integers(150, 300))
                hd = np.cumsum(rng.normal(0, 0.3, n))
                stepm = rng.gamma(2.0, 15.0, n)
                lat = 52.37 + np.cumsum(stepm * np.cos(hd)) / 111000
                lon = 4.89 + np.cumsum(stepm * np.sin(hd)) / 68000
                stops = int(rng.integers(5, 30))
                dur = stepm.sum() / 7.0 / 60 + stops * 2.5 + rng.normal(0, 2)
                f.write("R%d-%d,%d,%s,%.2f\n" % (s, r, stops, encode_polyline(zip(lat, lon)), dur))


def featurize(lines):
    x = np.empty((len(lines), PTS, 5), np.float32)
    y = np.empty((len(lines), 1), np.float32)
    for j, raw in enumerate(lines.numpy()):
        rid, stops, poly, dur = raw.decode().split(",")
        pts = np.asarray(decode_polyline(poly))
        d = np.diff(pts, axis=0) * np.array([111000.0, 68000.0])
        step = np.hypot(d[:, 0], d[:, 1])
        head = np.arctan2(d[:, 1], d[:, 0])
        idx = np.linspace(0, len(step) - 1, PTS).astype(np.int64)
        cum = np.cumsum(step)[idx] / 5000.0
        x[j] = np.stack([step[idx] / 50, np.sin(head[idx]), np.cos(head[idx]), cum,
                         np.full(PTS, float(stops) / 30)], -1)
        y[j, 0] = float(dur) / 60
    return x, y


def make_dataset(root, seed):
    files = tf.data.Dataset.list_files(os.path.join(root, "routes-*.csv"), shuffle=True, seed=seed)
    ds = files.interleave(tf.data.TextLineDataset, cycle_length=4, block_length=8).repeat()

    def fe(lines):
        x, y = tf.py_function(featurize, [lines], [tf.float32, tf.float32])
        x.set_shape((None, PTS, 5))
        y.set_shape((None, 1))
        return x, y

    return ds.shuffle(512, seed=seed).batch(BATCH).map(fe).prefetch(2)


def build_model():
    inp = keras.Input((PTS, 5))
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_input_polyline_interleave_deliveryroutes_")
    try:
        keras.utils.set_random_seed(SEED)
        write_shards(tmp, np.random.default_rng(SEED))
        model = build_model()
        timer = StepTimer()
        hist = model.fit(make_dataset(tmp, SEED), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            batch = next(iter(make_dataset(tmp, SEED + 1)))
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS,
                       callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("input_polyline_interleave_deliveryroutes: mae %.3f h, %s" % (hist.history["mae"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
