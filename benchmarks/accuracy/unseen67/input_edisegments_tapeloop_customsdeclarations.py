"""Customs-inspection risk scoring from raw EDIFACT CUSDEC messages (shipping / customs).

Input path: a custom tf.GradientTape training loop; each step the Python loop
parses a batch of EDIFACT messages (segment / element / component splitting,
release-character unescaping, HS-code and value extraction, feature hashing)
and passes numpy arrays to a tf.function train step.
Known bottleneck: Python-side EDIFACT parsing in the loop (input bound).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import random
import zlib

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 220
HASH_DIM = 256
NFEAT = HASH_DIM + 12
NCLASS = 3  # green / amber / red lane
COUNTRIES = ["CN", "DE", "US", "VN", "TR", "IN", "BR", "NL"]


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_messages(seed=3, n=1200):
    rng = random.Random(seed)
    msgs = []
    for i in range(n):
        cls = i % NCLASS
        segs = ["UNH+%d+CUSDEC:D:96B:UN" % i, "BGM+929+DEC%07d+9" % rng.randrange(10 ** 7),
                "NAD+CN+++BUYER?+SONS LTD", "LOC+22+NLRTM", "DTM+137:20260301:102"]
        for k in range(2 + cls * 2 + rng.randrange(2)):
            hs = "%04d%02d%02d" % (rng.randrange(100, 9999), rng.randrange(100), rng.randrange(100))
            segs += ["CST+%d+%s:122::9" % (k + 1, hs),
                     "LOC+27+%s" % rng.choice(COUNTRIES),
                     "MOA+123:%.2f:EUR" % (rng.random() * 10000 * (1 + cls)),
                     "MEA+WT+AAB+KGM:%.1f" % (rng.random() * 2000),
                     "FTX+AAA+++%s" % " ".join(rng.choice(["PARTS", "STEEL", "TEXTILE?'S", "MACHINE",
                                                           "CHEMICAL", "FOOD", "TOY?+GAME"]) for _ in range(4))]
        segs.append("UNT+%d+%d" % (len(segs) + 1, i))
        msgs.append((cls, "'".join(segs) + "'"))
    return msgs


def split_release(text, sep):
    out, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "?":
            esc = True
        elif ch == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def parse_message(text):
    vec = np.zeros(NFEAT, np.float32)
    total_val, total_wt, lines, origins = 0.0, 0.0, 0, set()
    for seg in split_release(text, "'"):
        if not seg:
            continue
        elems = split_release(seg, "+")
        tag = elems[0]
        if tag == "CST":
            hs = split_release(elems[2], ":")[0]
            vec[zlib.crc32(hs[:4].encode()) % HASH_DIM] += 1.0
            vec[zlib.crc32(hs[:6].encode()) % HASH_DIM] += 0.5
            lines += 1
        elif tag == "LOC" and elems[1] == "27":
            origins.add(elems[2])
            vec[HASH_DIM + COUNTRIES.index(elems[2])] += 0.2
        elif tag == "MOA":
            total_val += float(split_release(elems[1], ":")[1])
        elif tag == "MEA":
            total_wt += float(split_release(elems[3], ":")[1])
        elif tag == "FTX":
            for w in elems[-1].split():
                vec[zlib.crc32(w.encode()) % HASH_DIM] += 0.25
    vec[HASH_DIM + 8] = lines / 10.0
    vec[HASH_DIM + 9] = total_val / 1e5
    vec[HASH_DIM + 10] = total_wt / 1e4
    vec[HASH_DIM + 11] = len(origins) / 8.0
    return vec


def python_batches(msgs, seed=0):
    rng = random.Random(seed)
    while True:
        picks = [msgs[rng.randrange(len(msgs))] for _ in range(BATCH)]
        x = np.stack([parse_message(t) for _, t in picks])
        y = np.asarray([c for c, _ in picks], np.int32)
        yield x, y


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(NCLASS)(x))


def run(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    gen = python_batches(make_messages())
    t = time.perf_counter()
    full, loss = run(lambda: next(gen))
    print("[edisegments] steps/s=%.2f sec/step=%.4f loss=%.3f train_s=%.1f" % (1 / full, full, loss, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        fixed = next(gen)
        comp, _ = run(lambda: fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[edisegments] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[edisegments] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
