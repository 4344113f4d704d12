import time; T0 = time.perf_counter()
"""Summit register (logbook) entries -> did the party reach the summit in good weather?

Scanned summit-register lines are kept as raw strings. A plain Python loop
builds every batch: it splits each entry, parses date/time, elevation and
party size, normalises the free-text note (lower-casing, punctuation
stripping, simple stemming), hashes tokens to ids and pads them. The batch
is then handed to a custom @tf.function GradientTape train step.
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
STEPS = 280
EPOCHS = 3
VOCAB = 4096
MAXLEN = 128
NUM_FEATS = 8
PEAKS = ["Mount Rainier", "Pyramid Peak", "Granite Dome", "Sawtooth Spire", "Eagle Crag",
         "Whitehorn", "Bald Knob", "Cathedral Rock", "Mt. Hood", "Longs Peak"]
NOTE_WORDS = ("clouds rolled in summited at dawn great views windy cold hands roped up "
              "glissaded down the couloir turned back below false summit ice axe crampons "
              "thunder heard lightning nearby bluebird sky first fourteener with dad "
              "lost the trail scree slog worth it snowfield postholing marmots everywhere").split()


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_entries(n, seed=82):
    rng = random.Random(seed)
    day0 = datetime.datetime(2023, 6, 1, 4, 0)
    out = []
    for _ in range(n):
        t = day0 + datetime.timedelta(minutes=rng.randrange(0, 150 * 24 * 60))
        note = " ".join(rng.choice(NOTE_WORDS) for _ in range(rng.randrange(90, 240)))
        note = note.replace(" great", ", Great").replace(" windy", "! Windy")
        out.append(f"{t:%Y-%m-%d %H:%M} | {rng.choice(PEAKS)} | {rng.randrange(1800, 4400)} m | "
                   f"party {rng.randrange(1, 7)} | {note}")
    return out


def stem(w):
    for suf in ("ing", "ed", "es", "s", "ly"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def parse_entry(line):
    when, peak, elev, party, note = [p.strip() for p in line.split("|")]
    t = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M")
    num = np.array([t.hour / 24.0, t.minute / 60.0, t.timetuple().tm_yday / 366.0,
                    int(elev.split()[0]) / 4400.0, int(party.split()[1]) / 6.0,
                    PEAKS.index(peak) / len(PEAKS), t.weekday() / 6.0, len(note) / 500.0],
                   np.float32)
    clean = "".join(c if c.isalnum() or c == " " else " " for c in note.lower())
    toks = [stem(w) for w in clean.split()]
    ids = [zlib.crc32(w.encode()) % (VOCAB - 1) + 1 for w in toks][:MAXLEN]
    ids += [0] * (MAXLEN - len(ids))
    good = ("turned" not in toks and "thunder" not in toks) and t.hour < 13
    return num, ids, float(good)


def make_batch(entries, step):
    nums, ids, ys = [], [], []
    base = step * BATCH
    for j in range(BATCH):
        n, i, y = parse_entry(entries[(base + j) % len(entries)])
        nums.append(n)
        ids.append(i)
        ys.append(y)
    return (np.stack(nums), np.asarray(ids, np.int32), np.asarray(ys, np.float32)[:, None])


def build_model():
    keras.utils.set_random_seed(82)
    tok = keras.Input((MAXLEN,), dtype="int32")
    num = keras.Input((NUM_FEATS,))
    e = keras.layers.Embedding(VOCAB, 32)(tok)
    e = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(e)
    e = keras.layers.GlobalMaxPooling1D()(e)
    x = keras.layers.Concatenate()([e, num])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model([tok, num], out)


def train(batches_for_step):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(num, ids, y):
        with tf.GradientTape() as tape:
            logits = model([ids, num], training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            num, ids, y = batches_for_step(epoch * STEPS + step)
            loss = float(train_step(tf.constant(num), tf.constant(ids), tf.constant(y)))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), len(gaps), loss


def main():
    entries = make_entries(BATCH * STEPS)
    full, n, loss = train(lambda s: make_batch(entries, s))
    emit({"steps_per_second": 1.0 / full})
    msg = f"summitlogbook: {full * 1000:.1f} ms/step over {n} gaps, loss {loss:.3f}"
    if TRUTH:
        fixed = make_batch(entries, 0)
        compute, _, _ = train(lambda s: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
