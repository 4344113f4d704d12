"""Library catalog subject classification from MARC 21 (ISO 2709) records.

Bottleneck (input): a Python generator behind tf.data.Dataset.from_generator builds
and parses raw ISO 2709 records (leader, directory, subfields) and hashes character
trigrams of every text field, one record at a time, while the model is a small MLP.
"""
import time
WALL_T0 = time.perf_counter()
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

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


import zlib

BATCH = 128
FEAT = 2048
N_CLASSES = 10
STEPS = 20
EPOCHS = 3
NOTE_FIELDS = 1          # 5xx note fields per record: the Python parsing load knob

SUBJECTS = ["History", "Poetry", "Chemistry", "Law", "Music", "Botany",
            "Linguistics", "Architecture", "Theology", "Economics"]
WORDS = ("the of and a in to history letters essays collected works volume second edition "
         "studies notes on early modern press printed library translation grammar dialect "
         "archive manuscript register parish chronicle review survey atlas guide").split()


def make_record(rng):
    subj = int(rng.integers(N_CLASSES))
    def text(n):
        return " ".join(WORDS[i] for i in rng.integers(len(WORDS), size=n))
    fields = [("001", f"ocm{rng.integers(1e8):08d}"),
              ("100", f"1 \x1fa{text(2).title()}, {text(1).title()}\x1fd{1800 + int(rng.integers(200))}-"),
              ("245", f"10\x1fa{text(6)} {SUBJECTS[subj].lower()} /\x1fc{text(3)}."),
              ("260", f"  \x1faLondon :\x1fb{text(2).title()},\x1fc{1850 + int(rng.integers(170))}.")]
    for _ in range(NOTE_FIELDS):
        fields.append(("500", "  \x1fa" + text(int(rng.integers(12, 30))) + "."))
    fields.append(("650", f" 0\x1fa{SUBJECTS[subj]}\x1fx{text(1).title()}\x1fv{text(1).title()}."))
    directory, data, pos = [], [], 0
    for tag, val in fields:
        b = (val + "\x1e").encode("utf-8")
        directory.append(f"{tag}{len(b):04d}{pos:05d}")
        data.append(b)
        pos += len(b)
    dir_b = ("".join(directory) + "\x1e").encode()
    base = 24 + len(dir_b)
    total = base + pos + 1
    leader = f"{total:05d}nam a22{base:05d} a 4500".encode()
    return leader + dir_b + b"".join(data) + b"\x1d", subj


def parse_record(raw):
    leader = raw[:24].decode()
    base = int(leader[12:17])
    dir_s = raw[24:base - 1].decode()
    out = {}
    for i in range(0, len(dir_s), 12):
        tag, ln, st = dir_s[i:i + 3], int(dir_s[i + 3:i + 7]), int(dir_s[i + 7:i + 12])
        val = raw[base + st: base + st + ln - 1].decode("utf-8")
        if tag < "010":
            out.setdefault(tag, []).append({"": val})
            continue
        subs = {}
        for chunk in val[2:].split("\x1f")[1:]:
            subs.setdefault(chunk[0], []).append(chunk[1:])
        out.setdefault(tag, []).append(subs)
    return out


def featurize(rec):
    v = np.zeros(FEAT, np.float32)
    for tag in ("100", "245", "260", "500"):
        for subs in rec.get(tag, []):
            for vals in subs.values():
                for s in vals:
                    s = s.lower()
                    for j in range(len(s) - 2):
                        v[zlib.crc32(s[j:j + 3].encode()) % FEAT] += 1.0
    return np.log1p(v)


def catalog_generator():
    rng = np.random.default_rng(2071)
    while True:
        raw, subj = make_record(rng)
        rec = parse_record(raw)
        subj_from_650 = SUBJECTS.index(rec["650"][0]["a"][0].rstrip("."))
        assert subj_from_650 == subj
        yield featurize(rec), np.int32(subj)


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dense(N_CLASSES)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def full_dataset():
    sig = (tf.TensorSpec((FEAT,), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(catalog_generator, output_signature=sig).batch(BATCH)


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


full = run(full_dataset())
compute = None
if ARGS.truth:
    batch = next(iter(full_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
finish(full, compute)
