"""Vessel-type classification from raw AIS NMEA sentences (shipping).

Input path: a Python generator decodes !AIVDM sentences (checksum check,
6-bit ASCII de-armoring, bit-field extraction) for a window of position
reports per sample; it feeds model.fit via tf.data.Dataset.from_generator.
Known bottleneck: Python-side NMEA decoding (input bound).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import math
import os
import random

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 60
EPOCHS = 3
WINDOW = 8
NCLASS = 5


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
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


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def _bits(value, width):
    value &= (1 << width) - 1
    return [(value >> (width - 1 - i)) & 1 for i in range(width)]


def _armor(bits):
    out = []
    for i in range(0, len(bits), 6):
        v = 0
        for b in bits[i:i + 6]:
            v = (v << 1) | b
        out.append(chr(v + 48) if v < 40 else chr(v + 56))
    return "".join(out)


def _checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return "%02X" % c


def make_tracks(seed=7, n_tracks=30, length=120):
    rng = random.Random(seed)
    tracks = []
    for t in range(n_tracks):
        cls = t % NCLASS
        mmsi = 211000000 + t
        lat, lon = 53.5 + rng.random(), 8.0 + rng.random()
        sog = [2.0, 8.0, 12.0, 16.0, 22.0][cls] + rng.random()
        cog = rng.random() * 360
        sent = []
        for _ in range(length):
            cog = (cog + rng.gauss(0, [20, 8, 4, 2, 1][cls])) % 360
            sog = max(0.0, sog + rng.gauss(0, 0.3))
            lat += math.cos(math.radians(cog)) * sog * 1e-4
            lon += math.sin(math.radians(cog)) * sog * 1e-4
            bits = (_bits(1, 6) + _bits(0, 2) + _bits(mmsi, 30) + _bits(0, 4)
                    + _bits(0, 8) + _bits(int(sog * 10), 10) + _bits(1, 1)
                    + _bits(int(lon * 600000), 28) + _bits(int(lat * 600000), 27)
                    + _bits(int(cog * 10), 12) + _bits(int(cog) % 360, 9)
                    + _bits(rng.randint(0, 59), 6) + _bits(0, 2) + _bits(0, 3)
                    + _bits(0, 1) + _bits(0, 1) + _bits(0, 19))
            body = "AIVDM,1,1,,A,%s,0" % _armor(bits)
            sent.append("!%s*%s" % (body, _checksum(body)))
        tracks.append((cls, sent))
    return tracks


def decode(sentence):
    body, cs = sentence[1:].split("*")
    if _checksum(body) != cs:
        raise ValueError("bad checksum")
    payload = body.split(",")[5]
    bits = []
    for ch in payload:
        v = ord(ch) - 48
        if v > 40:
            v -= 8
        for k in range(5, -1, -1):
            bits.append((v >> k) & 1)

    def field(a, w, signed=False):
        v = 0
        for b in bits[a:a + w]:
            v = (v << 1) | b
        if signed and v >= 1 << (w - 1):
            v -= 1 << w
        return v

    sog = field(50, 10) / 10.0
    lon = field(61, 28, True) / 600000.0
    lat = field(89, 27, True) / 600000.0
    cog = field(116, 12) / 10.0
    hdg = field(128, 9)
    return sog, lon, lat, cog, hdg


def sample_gen(tracks, seed):
    rng = random.Random(seed)
    while True:
        cls, sent = tracks[rng.randrange(len(tracks))]
        s = rng.randrange(len(sent) - WINDOW)
        rows = [decode(x) for x in sent[s:s + WINDOW]]
        lon0, lat0 = rows[0][1], rows[0][2]
        feat = []
        for sog, lon, lat, cog, hdg in rows:
            feat += [sog / 25.0, (lon - lon0) * 100, (lat - lat0) * 100,
                     math.sin(math.radians(cog)), math.cos(math.radians(cog)),
                     math.sin(math.radians(hdg))]
        yield np.asarray(feat, np.float32), np.int32(cls)


def build_model():
    inp = keras.Input((WINDOW * 6,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def make_ds(tracks):
    ds = tf.data.Dataset.from_generator(
        lambda: sample_gen(tracks, 123),
        output_signature=(tf.TensorSpec((WINDOW * 6,), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tracks = make_tracks()
    ds = make_ds(tracks)
    t = time.perf_counter()
    full = run(ds)
    print("[aisnmea] steps/s=%.2f sec/step=%.4f train_s=%.1f" % (1 / full, full, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        comp = run(fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[aisnmea] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[aisnmea] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
