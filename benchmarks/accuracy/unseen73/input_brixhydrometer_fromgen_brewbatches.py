"""Brewery fermentation monitoring: predicts a stuck fermentation from raw
hydrometer log text.  Input path: a Python generator (tf.data.Dataset.from_generator)
parses every log line (timestamp, specific gravity, temperature, pH, CO2) and
resamples the attenuation curve in pure Python.  Deliberate bottleneck: input."""
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


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()
import math

BATCH = 64
EPOCHS = 4
STEPS = 40
LINES = 60           # log lines parsed per brew batch
POINTS = 48          # resampled points per channel
POOL = 384


def make_logs(seed=7):
    rng = np.random.default_rng(seed)
    logs, labels = [], []
    for i in range(POOL):
        og = 1.040 + 0.03 * rng.random()
        stuck = int(rng.random() < 0.35)
        fg = og - (0.6 if stuck else 0.8) * (og - 1.0)
        k = 0.04 + 0.03 * rng.random()
        hours = np.sort(rng.uniform(0, 240, LINES))
        sg = fg + (og - fg) * np.exp(-k * hours) + rng.normal(0, 0.0006, LINES)
        temp = 18.5 + 1.5 * np.sin(hours / 24.0) + rng.normal(0, 0.2, LINES)
        ph = 5.2 - 0.9 * (1 - np.exp(-k * hours)) + rng.normal(0, 0.03, LINES)
        co2 = np.abs(np.gradient(-sg, hours + 1e-3)) * 1e4
        lines = [
            f"2026-03-{1 + int(h // 24):02d}T{int(h % 24):02d}:{int((h * 60) % 60):02d}:00Z,"
            f"SG={s:.4f},T={t:.2f}C,pH={p:.3f},CO2={c:.3f}vol,tank=FV{i % 12:02d}"
            for h, s, t, p, c in zip(hours, sg, temp, ph, co2)
        ]
        logs.append("\n".join(lines))
        labels.append(stuck)
    return logs, np.array(labels, np.float32)


def parse_log(text):
    hours, sg, temp, ph, co2 = [], [], [], [], []
    for line in text.split("\n"):
        fields = line.split(",")
        ts = fields[0]
        day = int(ts[8:10]); hh = int(ts[11:13]); mm = int(ts[14:16])
        hours.append((day - 1) * 24 + hh + mm / 60.0)
        kv = {}
        for f in fields[1:]:
            k, v = f.split("=")
            kv[k] = v
        sg.append(float(kv["SG"]))
        temp.append(float(kv["T"].rstrip("C")))
        ph.append(float(kv["pH"]))
        co2.append(float(kv["CO2"].replace("vol", "")))
    og = max(sg)
    out = []
    for series in (sg, temp, ph, co2):
        lo, hi = min(series), max(series)
        span = (hi - lo) or 1.0
        res = []
        j = 0
        for p in range(POINTS):
            t = 240.0 * p / (POINTS - 1)
            while j < len(hours) - 2 and hours[j + 1] < t:
                j += 1
            h0, h1 = hours[j], hours[j + 1]
            w = 0.0 if h1 == h0 else min(1.0, max(0.0, (t - h0) / (h1 - h0)))
            res.append((series[j] * (1 - w) + series[j + 1] * w - lo) / span)
        out.extend(res)
    att = [(og - s) / max(og - 1.0, 1e-3) for s in sg]
    out.append(att[-1]); out.append(math.log1p(sum(co2)))
    return out


def make_dataset(logs, labels, seed):
    def gen():
        rng = np.random.default_rng(seed)
        while True:
            i = int(rng.integers(0, len(logs)))
            yield np.asarray(parse_log(logs[i]), np.float32), labels[i:i + 1]
    sig = (tf.TensorSpec((4 * POINTS + 2,), tf.float32), tf.TensorSpec((1,), tf.float32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)


def build_model():
    inp = keras.Input((4 * POINTS + 2,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(3)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    args = parse_args()
    logs, labels = make_logs()
    ds = make_dataset(logs, labels, seed=11)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[brewbatches] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[brewbatches] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
