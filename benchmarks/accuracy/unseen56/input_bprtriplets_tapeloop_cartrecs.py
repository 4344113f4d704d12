"""Add-to-cart recommendations trained with BPR on implicit feedback.

Per-user cart event histories (item, timestamp) live in Python lists. Each
training step samples users, picks a positive item, walks the history
backwards to build a de-duplicated, time-decay-weighted recent-item list, and
draws negatives by popularity^0.75 rejection sampling against the user's
seen-item set, all in Python; a @tf.function GradientTape step then updates
a weighted-pooling user tower and item embeddings with the BPR loss.
"""
import os
import sys
import json
import time
import bisect
import math
import random
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 640
STEPS = 300
N_USERS = 20000
N_ITEMS = 40000
HIST = 40
N_NEG = 16
DIM = 32


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_histories(seed):
    rng = random.Random(seed)
    pop = np.random.default_rng(seed).zipf(1.3, N_ITEMS * 4) % N_ITEMS
    pop_list = pop.tolist()
    histories = []
    for _ in range(N_USERS):
        n = rng.randint(40, 300)
        start = rng.randrange(len(pop_list) - n)
        ts = 1.7e9 + rng.uniform(0, 8e6)
        events = []
        for i in pop_list[start:start + n]:
            ts += rng.expovariate(1 / 3600.0)
            events.append((int(i), ts))
        histories.append(events)
    counts = np.bincount(pop, minlength=N_ITEMS).astype(np.float64) + 1.0
    w = counts ** 0.75
    cdf = np.cumsum(w / w.sum()).tolist()
    return histories, cdf


class TripletSampler:
    def __init__(self, histories, cdf, seed):
        self.h, self.cdf, self.rng = histories, cdf, random.Random(seed)

    def negative(self, seen):
        while True:
            item = bisect.bisect_left(self.cdf, self.rng.random())
            if item < N_ITEMS and item not in seen:
                return item

    def batch(self):
        hist = np.zeros((BATCH, HIST), np.int32)
        wts = np.zeros((BATCH, HIST), np.float32)
        pos = np.zeros((BATCH,), np.int32)
        neg = np.zeros((BATCH, N_NEG), np.int32)
        for b in range(BATCH):
            u = self.rng.randrange(N_USERS)
            events = self.h[u]
            seen = set(item for item, _ in events)
            cut = self.rng.randint(len(events) // 2, len(events) - 1)
            pos[b], t_cut = events[cut]
            picked, ids, ws = set(), [], []
            for item, ts in reversed(events[:cut]):
                if item in picked:
                    continue
                picked.add(item)
                ids.append(item + 1)
                ws.append(math.exp(-(t_cut - ts) / 86400.0))
                if len(ids) == HIST:
                    break
            hist[b, :len(ids)] = ids
            wts[b, :len(ws)] = ws
            for k in range(N_NEG):
                neg[b, k] = self.negative(seen)
        return hist, wts, pos, neg


class Recommender(keras.Model):
    def __init__(self):
        super().__init__()
        self.item = keras.layers.Embedding(N_ITEMS + 1, DIM)
        self.tower = keras.Sequential([keras.layers.Dense(512, activation="relu"),
                                       keras.layers.Dense(512, activation="relu"),
                                       keras.layers.Dense(DIM)])

    def call(self, hist, wts, pos, neg):
        pooled = tf.reduce_sum(self.item(hist) * wts[..., None], 1) / (
            tf.reduce_sum(wts, 1, keepdims=True) + 1e-6)
        u = self.tower(pooled)
        sp = tf.reduce_sum(u * self.item(pos + 1), -1, keepdims=True)
        sn = tf.einsum("bd,bkd->bk", u, self.item(neg + 1))
        return sp, sn


def run(batches):
    """batches: callable returning (hist, wts, pos, neg) numpy arrays for the next step."""
    keras.utils.set_random_seed(13)
    model = Recommender()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(hist, wts, pos, neg):
        with tf.GradientTape() as tape:
            sp, sn = model(hist, wts, pos, neg)
            loss = -tf.reduce_mean(tf.math.log_sigmoid(sp - sn))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = 0.0
    for _ in range(STEPS):
        hist, wts, pos, neg = batches()
        loss = float(step(hist, wts, pos, neg))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_bprtriplets_tapeloop_cartrecs_")
    try:
        t0 = time.perf_counter()
        histories, cdf = make_histories(2)
        sampler = TripletSampler(histories, cdf, 8)
        full, loss = run(sampler.batch)
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step bpr %.4f" % (full * 1e3, loss)
        if truth:
            fixed = TripletSampler(histories, cdf, 8).batch()
            comp, _ = run(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_bprtriplets_tapeloop_cartrecs: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
