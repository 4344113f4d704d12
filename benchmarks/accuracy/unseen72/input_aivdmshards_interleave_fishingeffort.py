"""Fishing-effort monitoring: classify vessel activity (trawling / longlining / steaming)
from raw AIS position reports.

Input path: tf.data interleave over receiver shards; each shard is a dataset of track
indices mapped through tf.py_function, which validates NMEA checksums and de-armours the
6-bit AIVDM payload of every type-1 position report bit by bit in Python.
"""
import json, math, os, sys, time
from functools import reduce

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 16, 40, 3
N_SHARDS, TRACKS_PER_SHARD, TRACK_LEN = 6, 60, 48


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def armour(bits):
    out = []
    for i in range(0, len(bits), 6):
        v = int(bits[i:i + 6], 2)
        out.append(chr(v + 48 if v < 40 else v + 56))
    return "".join(out)


def sentence(mmsi, sog, lon, lat, cog, sec):
    f = lambda v, n: format(v & ((1 << n) - 1), f"0{n}b")
    bits = (f(1, 6) + f(0, 2) + f(mmsi, 30) + f(7, 4) + f(0, 8) + f(int(sog * 10), 10) + f(1, 1)
            + f(int(lon * 600000), 28) + f(int(lat * 600000), 27) + f(int(cog * 10), 12) + f(511, 9)
            + f(sec, 6) + f(0, 2) + f(0, 3) + f(0, 1) + f(0, 19))
    body = f"AIVDM,1,1,,A,{armour(bits)},0"
    ck = reduce(lambda a, c: a ^ ord(c), body, 0)
    return f"!{body}*{ck:02X}"


def make_shards(rng):
    shards, labels = [], []
    for s in range(N_SHARDS):
        tracks, labs = [], []
        for t in range(TRACKS_PER_SHARD):
            kind = int(rng.integers(0, 3))
            lat, lon = rng.uniform(-45, 60), rng.uniform(-170, 170)
            cog = rng.uniform(0, 360)
            lines = []
            for k in range(TRACK_LEN):
                if kind == 0:
                    sog = rng.normal(3.2, 0.4); cog = (cog + rng.normal(0, 25)) % 360
                elif kind == 1:
                    sog = rng.normal(6.0, 1.5); cog = (cog + rng.choice([0, 0, 0, 90])) % 360
                else:
                    sog = rng.normal(11.0, 0.8); cog = (cog + rng.normal(0, 2)) % 360
                sog = max(0.0, sog)
                lat += sog / 60 * math.cos(math.radians(cog)) / 12
                lon += sog / 60 * math.sin(math.radians(cog)) / 12
                lines.append(sentence(200000000 + s * 1000 + t, sog, lon, lat, cog, (k * 5) % 60))
            tracks.append(lines)
            labs.append(kind)
        shards.append(tracks)
        labels.append(labs)
    return shards, labels


def decode_line(line):
    star = line.index("*")
    body = line[1:star]
    if reduce(lambda a, c: a ^ ord(c), body, 0) != int(line[star + 1:], 16):
        return None
    payload = body.split(",")[5]
    bits = "".join(format((ord(c) - 48) - 8 if ord(c) - 48 > 40 else ord(c) - 48, "06b") for c in payload)
    sint = lambda b: int(b, 2) - (1 << len(b)) if b[0] == "1" else int(b, 2)
    sog = int(bits[50:60], 2) / 10
    lon = sint(bits[61:89]) / 600000
    lat = sint(bits[89:116]) / 600000
    cog = int(bits[116:128], 2) / 10
    return sog, lon, lat, cog


def decode_track(shards, labels, s, t):
    rows, prev = [], None
    for line in shards[s][t]:
        r = decode_line(line)
        if r is None:
            continue
        sog, lon, lat, cog = r
        if prev is None:
            prev = r
        dlat, dlon = (lat - prev[2]) * 60, (lon - prev[1]) * 60 * math.cos(math.radians(lat))
        turn = ((cog - prev[3] + 180) % 360 - 180) / 180
        rows.append([sog / 12, math.sin(math.radians(cog)), math.cos(math.radians(cog)), dlat, dlon, turn])
        prev = r
    return np.asarray(rows, np.float32), np.int32(labels[s][t])


def make_ds(shards, labels, seed):
    def per_shard(s):
        order = tf.random.stateless_uniform((TRACKS_PER_SHARD * 4,), (seed, 0), 0, TRACKS_PER_SHARD, tf.int64) + 0 * s
        def fn(t):
            x, y = tf.py_function(lambda a, b: decode_track(shards, labels, int(a), int(b)), [s, t], [tf.float32, tf.int32])
            return tf.ensure_shape(x, (TRACK_LEN, 6)), tf.ensure_shape(y, ())
        return tf.data.Dataset.from_tensor_slices(order).map(fn)
    ds = tf.data.Dataset.range(N_SHARDS).interleave(per_shard, cycle_length=3, block_length=2)
    return ds.repeat().batch(BATCH).prefetch(2)


def make_model():
    return keras.Sequential([
        keras.Input((TRACK_LEN, 6)),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(3),
    ])


def train(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    shards, labels = make_shards(np.random.default_rng(72))
    full = train(make_ds(shards, labels, 1))
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"aivdmshards: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if TRUTH:
        x, y = next(iter(make_ds(shards, labels, 2)))
        comp = train(tf.data.Dataset.from_tensors((x, y)).repeat())
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
