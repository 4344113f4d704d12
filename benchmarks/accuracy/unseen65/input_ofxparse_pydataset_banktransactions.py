"""Bank transactions: spending-category classifier fed by a keras.utils.PyDataset that parses OFX text.

Bottleneck (input): PyDataset.__getitem__ parses OFX/SGML <STMTTRN> blocks with regular expressions,
normalises merchant names and hashes character trigrams into a bag-of-trigrams vector in pure Python,
one transaction at a time, on the training thread (workers=1, no multiprocessing).
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

import re

SEED = 6502
N_TXN = 4096
HASH_DIM = 1024
BATCH = 128
EPOCHS = 4
MERCHANTS = ["STARBUCKS", "SHELL OIL", "AMAZON MKTPLACE", "WHOLE FOODS", "UBER TRIP", "NETFLIX.COM",
             "CITY WATER UTIL", "PLANET FITNESS", "DELTA AIR", "TARGET", "CVS PHARMACY", "SPOTIFY",
             "CHEVRON", "TRADER JOES", "LYFT RIDE", "APPLE.COM/BILL", "HOME DEPOT", "COSTCO WHSE"]
TAG_RE = re.compile(r"<(TRNTYPE|DTPOSTED|TRNAMT|FITID|NAME|MEMO)>([^<\r\n]*)")


def make_statement(rng):
    blocks, labels = [], []
    for i in range(N_TXN):
        m = int(rng.integers(0, len(MERCHANTS)))
        amt = -abs(rng.lognormal(3.0 + 0.1 * m, 0.6))
        day = int(rng.integers(1, 29))
        blocks.append(
            "<STMTTRN>\n<TRNTYPE>DEBIT\n<DTPOSTED>2024%02d%02d%02d%02d00[-5:EST]\n<TRNAMT>%.2f\n"
            "<FITID>%012d\n<NAME>%s #%d %s\n<MEMO>POS PURCHASE CARD %04d REF %s\n</STMTTRN>"
            % (int(rng.integers(1, 13)), day, int(rng.integers(0, 24)), int(rng.integers(0, 60)), amt,
               i, MERCHANTS[m], int(rng.integers(100, 9999)), ["NY", "CA", "TX", "WA"][i % 4],
               int(rng.integers(0, 9999)), "%x" % int(rng.integers(1 << 30)))
        )
        labels.append(m % 6)
    return blocks, np.array(labels, np.int32)


def parse_block(block):
    fields = dict(TAG_RE.findall(block))
    name = re.sub(r"#\d+", "", fields["NAME"]).strip().lower()
    memo = fields["MEMO"].lower()
    vec = np.zeros(HASH_DIM + 8, np.float32)
    for text, off in ((name, 0), (memo, 7919)):
        padded = "^" + text + "$"
        for j in range(len(padded) - 2):
            h = 0
            for ch in padded[j:j + 3]:
                h = (h * 31 + ord(ch) + off) & 0xFFFFFFFF
            vec[h % HASH_DIM] += 1.0
    vec[:HASH_DIM] /= max(1.0, float(np.sqrt((vec[:HASH_DIM] ** 2).sum())))
    dt = fields["DTPOSTED"]
    month, day, hour = int(dt[4:6]), int(dt[6:8]), int(dt[8:10])
    amt = float(fields["TRNAMT"])
    vec[HASH_DIM:] = [np.log1p(abs(amt)) / 8.0, amt < 0, month / 12.0, day / 31.0, hour / 24.0,
                      np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24),
                      fields["TRNTYPE"] == "DEBIT"]
    return vec


class OfxStatementSequence(keras.utils.PyDataset):
    def __init__(self, blocks, labels, batch_size, **kw):
        super().__init__(**kw)
        self.blocks, self.labels, self.batch_size = blocks, labels, batch_size
        self.order = np.random.default_rng(SEED + 1).permutation(len(blocks))

    def __len__(self):
        return len(self.blocks) // self.batch_size

    def __getitem__(self, idx):
        ids = self.order[idx * self.batch_size:(idx + 1) * self.batch_size]
        x = np.stack([parse_block(self.blocks[i]) for i in ids])
        return x, self.labels[ids]


def build_model():
    inp = keras.Input((HASH_DIM + 8,))
    x = keras.layers.Dense(256, activation="relu")(inp)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(6)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    blocks, labels = make_statement(np.random.default_rng(SEED))
    seq = OfxStatementSequence(blocks, labels, BATCH)
    steps = len(seq)

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(seq, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[banktransactions] ofx PyDataset fit: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"{steps} steps x {EPOCHS} epochs, wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb, yb = seq[0]
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[banktransactions] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
