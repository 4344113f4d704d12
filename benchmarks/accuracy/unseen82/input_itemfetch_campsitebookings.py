import time; T0 = time.perf_counter()
"""Campsite booking records -> will the party cancel / no-show?

A keras.utils.PyDataset (workers=1) assembles each batch in __getitem__:
it parses raw reservation strings from the booking system export
(dates, site codes, party size, rig type, free-text requests), derives
calendar features with datetime and hashes the request words.
"""
import datetime
import json
import os
import random
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 240
EPOCHS = 3
HASH_DIM = 512
NUM_FEATS = 24
WINDOW_DAYS = 21
LOOPS = ["North Loop", "Lakeshore", "Aspen Flat", "Walk-in", "Group Area", "Equestrian"]
RIGS = ["tent", "tent", "van", "trailer", "rv", "hammock"]
WORDS = ("shade quiet near water restroom late arrival dog bear box fire ring accessible "
         "generator kids anniversary kayak launch early checkout extra vehicle electric hookup").split()


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_booking_lines(n, seed=82):
    rng = random.Random(seed)
    start = datetime.date(2024, 4, 1)
    lines = []
    for i in range(n):
        booked = start + datetime.timedelta(days=rng.randrange(0, 180))
        arrive = booked + datetime.timedelta(days=rng.randrange(0, 120))
        nights = rng.randrange(1, 8)
        req = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 60)))
        lines.append(
            f"id=R{i:07d};loop={rng.choice(LOOPS)};site={rng.choice('ABCDEFG')}{rng.randrange(1, 80):02d};"
            f"booked={booked.isoformat()}T{rng.randrange(24):02d}:{rng.randrange(60):02d};"
            f"arrive={arrive.isoformat()};nights={nights};party={rng.randrange(1, 9)};"
            f"rig={rng.choice(RIGS)};paid={rng.random() * 300:.2f};requests={req}")
    return lines


def make_calendar(seed=83):
    rng = random.Random(seed)
    day = datetime.date(2024, 3, 1)
    cal = {}
    for i in range(400):
        d = day + datetime.timedelta(days=i)
        cal[d.isoformat()] = min(1.0, 0.2 + 0.6 * (d.month in (6, 7, 8)) + 0.3 * (d.weekday() >= 4) * rng.random())
    return cal


CALENDAR = make_calendar()


def parse_booking(line):
    fields = dict(kv.split("=", 1) for kv in line.split(";"))
    booked = datetime.datetime.fromisoformat(fields["booked"])
    arrive = datetime.date.fromisoformat(fields["arrive"])
    lead = (arrive - booked.date()).days
    nights = int(fields["nights"])
    party = int(fields["party"])
    paid = float(fields["paid"])
    num = np.zeros(NUM_FEATS, np.float32)
    num[0] = lead / 120.0
    num[1] = nights / 7.0
    num[2] = party / 8.0
    num[3] = paid / 300.0
    num[4 + arrive.weekday()] = 1.0
    num[11 + LOOPS.index(fields["loop"])] = 1.0
    num[17 + min(RIGS.index(fields["rig"]), 4)] = 1.0
    num[22] = booked.hour / 24.0
    num[23] = 1.0 if arrive.month in (7, 8) else 0.0
    # loop occupancy around the stay, one calendar night at a time
    occ = []
    for k in range(-WINDOW_DAYS // 2, WINDOW_DAYS // 2 + nights):
        d = arrive + datetime.timedelta(days=k)
        occ.append(CALENDAR.get(d.isoformat(), 0.5) * (1.2 if d.weekday() >= 4 else 1.0))
    bag = np.zeros(HASH_DIM, np.float32)
    bag[0] = sum(occ) / len(occ)
    bag[1] = max(occ)
    # character 3- and 4-grams of the free-text requests (typos are common)
    text = " " + fields["requests"].lower() + " "
    for n in (3, 4):
        for i in range(len(text) - n + 1):
            bag[2 + zlib.crc32(text[i:i + n].encode()) % (HASH_DIM - 2)] += 0.2
    words = fields["requests"].split()
    for w in words:
        bag[zlib.crc32(w.encode()) % HASH_DIM] += 1.0
    for a, b in zip(words, words[1:]):
        bag[zlib.crc32((a + "_" + b).encode()) % HASH_DIM] += 0.5
    for a, b, c in zip(words, words[1:], words[2:]):
        bag[zlib.crc32((a + "_" + b + "_" + c).encode()) % HASH_DIM] += 0.25
    label = 1.0 if (lead > 60 and party < 3) or (paid < 40 and nights == 1) else 0.0
    return np.concatenate([num, bag]), label


class BookingBatches(keras.utils.PyDataset):
    def __init__(self, lines, **kwargs):
        super().__init__(workers=1, use_multiprocessing=False, **kwargs)
        self.lines = lines

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        xs, ys = [], []
        base = (idx * BATCH) % len(self.lines)
        for j in range(BATCH):
            x, y = parse_booking(self.lines[(base + j) % len(self.lines)])
            xs.append(x)
            ys.append(y)
        return np.stack(xs), np.asarray(ys, np.float32)


def build_model():
    keras.utils.set_random_seed(82)
    model = keras.Sequential([
        keras.Input((NUM_FEATS + HASH_DIM,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    lines = make_booking_lines(BATCH * STEPS)
    seq = BookingBatches(lines)
    timer = StepTimer()
    model = build_model()
    model.fit(seq, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"campsitebookings: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps"
    if TRUTH:
        batch = seq[0]
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
