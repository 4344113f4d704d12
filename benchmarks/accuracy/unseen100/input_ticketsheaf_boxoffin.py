import time; T0 = time.perf_counter()
"""Ticket-booth receipt fraud scorer.

The box office prints a text receipt for every sale: booth, show, seat block,
ticket lines with prices and discount codes.  A keras.utils.PyDataset renders
a batch of receipts and parses them back from text in __getitem__ (splitting
lines, reading prices, tallying discounts) into a feature vector per receipt,
then model.fit learns to flag receipts the auditors would query.
"""
import os
import sys
import json
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 48
EPOCHS = 5
STEPS_PER_EPOCH = 190
N_FEATURES = 96
BOOTHS = ["NORTH", "SOUTH", "MIDWAY", "SIDESHOW", "VIP"]
SHOWS = ["MATINEE", "EVENING", "LATE", "SCHOOL"]
TICKETS = {"ADULT": 18.0, "CHILD": 9.5, "SENIOR": 12.0, "FAMILY": 45.0, "RINGSIDE": 32.0}
CODES = ["NONE", "PRESS", "STAFF", "GROUP10", "COUPON5", "RAINCHECK"]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def print_receipt(rng, serial):
    lines = [f"RECEIPT #{serial:08d}",
             f"BOOTH {rng.choice(BOOTHS)} SHOW {rng.choice(SHOWS)}",
             f"BLOCK {rng.choice('ABCDEFGH')}{rng.randint(1, 40)}"]
    for _ in range(rng.randint(28, 64)):
        kind = rng.choice(list(TICKETS))
        qty = rng.randint(1, 6)
        code = rng.choice(CODES)
        price = TICKETS[kind] * (0.5 if code in ("PRESS", "STAFF") else 1.0)
        lines.append(f"  {kind:<9} x{qty} @ {price:7.2f} CODE={code}")
    lines.append(f"PAID {rng.choice(['CASH', 'CARD', 'VOUCHER'])}")
    return "\n".join(lines)


def parse_receipt(text):
    feats = [0.0] * N_FEATURES
    total = 0.0
    n_lines = 0
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        head = parts[0]
        if head == "BOOTH":
            feats[BOOTHS.index(parts[1])] = 1.0
            feats[5 + SHOWS.index(parts[3])] = 1.0
        elif head == "BLOCK":
            feats[9 + "ABCDEFGH".index(parts[1][0])] = 1.0
            feats[17] = int(parts[1][1:]) / 40.0
        elif head in TICKETS:
            qty = int(parts[1][1:])
            price = float(parts[3])
            code = parts[4].split("=")[1]
            k = list(TICKETS).index(head)
            c = CODES.index(code)
            feats[18 + k] += qty
            feats[23 + c] += qty
            feats[29 + k * len(CODES) + c] += price * qty / 100.0
            total += price * qty
            n_lines += 1
        elif head == "PAID":
            feats[60 + ["CASH", "CARD", "VOUCHER"].index(parts[1])] = 1.0
    feats[63] = total / 500.0
    feats[64] = n_lines / 64.0
    # character-level checksum bins, the auditors' tamper heuristic
    for i, ch in enumerate(text):
        feats[65 + (ord(ch) * (i + 1)) % 31] += 0.001
    suspicious = (feats[23 + 1] + feats[23 + 2] > 6) or (total > 1100 and feats[62] > 0)
    return feats, int(suspicious)


class ReceiptBatches(keras.utils.PyDataset):
    def __init__(self, seed, steps, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.steps = steps

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        rng = random.Random(self.seed * 100003 + idx)
        xs, ys = [], []
        for j in range(BATCH):
            text = print_receipt(rng, idx * BATCH + j)
            f, y = parse_receipt(text)
            xs.append(f)
            ys.append(y)
        return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(data, steps_per_epoch):
    timer = StepTimer()
    model = build_model()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=steps_per_epoch,
              callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    keras.utils.set_random_seed(5)
    data = ReceiptBatches(5, STEPS_PER_EPOCH, workers=1, use_multiprocessing=False)
    full = train(data, None)
    emit({"steps_per_second": 1.0 / full})
    print(f"[boxoffin] PyDataset receipts: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        x, y = ReceiptBatches(77, 1)[0]
        keras.utils.set_random_seed(5)
        compute = train(tf.data.Dataset.from_tensors((x, y)).repeat(), STEPS_PER_EPOCH)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[boxoffin] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
