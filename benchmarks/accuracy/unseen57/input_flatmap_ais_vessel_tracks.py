"""Maritime: classify vessel type from AIS position-report tracks.

Raw AIS text shards (NMEA-like sentences with XOR checksums) are parsed in Python inside
tf.data.Dataset.from_generator, one generator per shard, stitched together with
Dataset.flat_map. Checksum verification and per-report feature building run in Python
for every element, so the input pipeline is the bottleneck. Trained with model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
import math

N_SHARDS = 8
SAMPLES_PER_SHARD = 64
REPORTS = 64
BATCH = 64
STEPS = 30
EPOCHS = 3
N_CLASSES = 5


def nmea_checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return c


def make_shards():
    rng = np.random.default_rng(57)
    shards, labels = [], []
    for s in range(N_SHARDS):
        lines_s, lab_s = [], []
        for k in range(SAMPLES_PER_SHARD):
            cls = int(rng.integers(N_CLASSES))
            mmsi = int(rng.integers(200000000, 799999999))
            lat, lon = rng.uniform(30, 60), rng.uniform(-20, 30)
            speed = 4.0 + 3.0 * cls
            cog = rng.uniform(0, 360)
            ts = 1.7e9 + rng.uniform(0, 1e6)
            track = []
            for r in range(REPORTS):
                cog = (cog + rng.normal(0, 2 + 4 * (cls % 2))) % 360
                sog = max(0.0, speed + rng.normal(0, 1.0))
                lat += sog * math.cos(math.radians(cog)) / 3600.0
                lon += sog * math.sin(math.radians(cog)) / 3600.0
                ts += rng.uniform(8, 12)
                body = (f"AIVDM,{mmsi},{ts:.1f},{lat:.6f},{lon:.6f},{sog:.2f},"
                        f"{cog:.2f},{int(cog + rng.normal(0, 3)) % 360},{cls}")
                track.append(f"!{body}*{nmea_checksum(body):02X}")
            lines_s.append("\n".join(track))
            lab_s.append(cls)
        shards.append(lines_s)
        labels.append(lab_s)
    return shards, labels


SHARDS, LABELS = make_shards()


def parse_track(text):
    feats = np.zeros((REPORTS, 8), np.float32)
    prev = None
    for i, line in enumerate(text.split("\n")):
        body, cs = line[1:].split("*")
        if int(cs, 16) != nmea_checksum(body):
            continue
        f = body.split(",")
        ts, lat, lon = float(f[2]), float(f[3]), float(f[4])
        sog, cog, hdg = float(f[5]), float(f[6]), float(f[7])
        if prev is None:
            dt = dlat = dlon = 0.0
        else:
            dt = ts - prev[0]
            dlat = (lat - prev[1]) * 111.2
            dlon = (lon - prev[2]) * 111.2 * math.cos(math.radians(lat))
        drift = ((hdg - cog + 180.0) % 360.0) - 180.0
        feats[i] = (dt / 10.0, dlat * 100, dlon * 100, sog / 20.0,
                    math.sin(math.radians(cog)), math.cos(math.radians(cog)), drift / 10.0,
                    math.hypot(dlat, dlon) * 100)
        prev = (ts, lat, lon)
    return feats


def shard_generator(shard_id):
    shard_id = int(shard_id)
    for text, lab in zip(SHARDS[shard_id], LABELS[shard_id]):
        yield parse_track(text), np.int32(lab)


SIG = (tf.TensorSpec((REPORTS, 8), tf.float32), tf.TensorSpec((), tf.int32))


def make_dataset():
    ds = tf.data.Dataset.range(N_SHARDS).flat_map(
        lambda i: tf.data.Dataset.from_generator(shard_generator, args=(i,), output_signature=SIG))
    return ds.repeat().batch(BATCH)


def build_model():
    m = keras.Sequential([
        keras.Input((REPORTS, 8)),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"input_flatmap_ais_vessel_tracks: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    finish_truth(full, compute)
