"""Veterinary blood-panel triage model (u77).

Domain: a referral veterinary laboratory sends HL7 v2-style ORU messages
(MSH/PID/OBR/OBX segments) with CBC + chemistry results for dogs, cats,
horses and rabbits; the model predicts one of five clinical categories.
Data path: HL7 strings -> tf.data.Dataset.from_tensor_slices -> map(
tf.numpy_function(parse)) per message (segment split, analyte code lookup,
SI/conventional unit conversion, species reference-range flags) -> batch
-> model.fit.
Deliberate bottleneck: per-message Python parsing inside tf.numpy_function.
"""
import time

_WALL0 = time.perf_counter()

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


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "input_numpyfnhl7_vetbloodwork"
BATCH = 128
STEPS = 60
EPOCHS = 2
N_MSG = 3000
SPECIES = ["CANINE", "FELINE", "EQUINE", "LAPINE"]
ANALYTES = ["HGB", "HCT", "RBC", "WBC", "NEU", "LYM", "MON", "EOS", "PLT", "MCV",
            "GLU", "BUN", "CREA", "ALT", "ALP", "GGT", "TBIL", "ALB", "GLOB", "TP",
            "NA", "K", "CL", "CA", "PHOS", "CHOL", "TRIG", "AMYL", "LIPA", "CK",
            "SDMA", "T4"]
IDX = {a: i for i, a in enumerate(ANALYTES)}
CONV = {"GLU": 18.0, "BUN": 2.8, "CREA": 88.4, "CHOL": 38.7, "CA": 4.0, "TBIL": 17.1}
NA = len(ANALYTES)
NFEAT = 2 * NA + len(SPECIES) + 2


def make_messages(rng):
    msgs, labels = [], []
    for m in range(N_MSG):
        sp = int(rng.integers(0, 4))
        cat = int(rng.integers(0, 5))
        vals = rng.lognormal(0.0, 0.25, NA) * (1 + np.arange(NA) % 7)
        if cat == 1:
            vals[[11, 12, 30]] *= 3.0
        elif cat == 2:
            vals[[13, 14, 15, 16]] *= 4.0
        elif cat == 3:
            vals[[3, 4]] *= 2.5
        elif cat == 4:
            vals[[10, 25, 26]] *= 2.0
        segs = ["MSH|^~\\&|VETLAB|REFCLINIC|LIS|HOSP|20261206%04d||ORU^R01|M%06d|P|2.5" % (m % 2400, m),
                "PID|1||A%06d||%s^PATIENT||2019%04d|%s" % (m, SPECIES[sp], m % 1231, "MF"[m % 2]),
                "OBR|1||L%06d|PANEL^CBC+CHEM|||20261206" % m]
        for k, a in enumerate(ANALYTES):
            v, unit = vals[k], "conv"
            if a in CONV and rng.random() < 0.5:
                v, unit = v * CONV[a], "SI"
            lo, hi = 0.7 * (1 + k % 7), 1.4 * (1 + k % 7)
            segs.append("OBX|%d|NM|%s^%s^L||%.3f|%s|%.2f-%.2f|%s|||F" % (
                k + 1, a, a.lower(), v, unit, lo, hi, "H" if vals[k] > hi else "N"))
        msgs.append("\r".join(segs))
        labels.append(cat)
    return msgs, np.array(labels, np.int32)


def parse_message(raw):
    text = raw.decode("ascii")
    feat = np.zeros(NFEAT, np.float32)
    for seg in text.split("\r"):
        fields = seg.split("|")
        kind = fields[0]
        if kind == "PID":
            sp = fields[5].split("^")[0]
            feat[2 * NA + SPECIES.index(sp)] = 1.0
            feat[-2] = 1.0 if fields[8] == "F" else 0.0
        elif kind == "OBX" and fields[2] == "NM":
            code = fields[3].split("^")[0]
            k = IDX[code]
            v = float(fields[5])
            if fields[6] == "SI":
                v /= CONV[code]
            lo, hi = (float(t) for t in fields[7].split("-"))
            feat[k] = np.log1p(v)
            feat[NA + k] = (v - lo) / (hi - lo)
        elif kind == "MSH":
            feat[-1] = int(fields[6][-4:]) / 2400.0
    return feat


def make_dataset(msgs, labels, seed):
    ds = tf.data.Dataset.from_tensor_slices((msgs, labels)).shuffle(len(msgs), seed=seed).repeat()

    def _map(raw, y):
        x = tf.numpy_function(parse_message, [raw], tf.float32)
        x.set_shape((NFEAT,))
        return x, y

    return ds.map(_map).batch(BATCH)


def build_model():
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(5),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    msgs, labels = make_messages(np.random.default_rng(7703))
    full = train(make_dataset(msgs, labels, 1))
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(make_dataset(msgs, labels, 2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute)


if __name__ == "__main__":
    main()
