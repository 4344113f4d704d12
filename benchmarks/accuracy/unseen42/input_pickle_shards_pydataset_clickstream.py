"""Purchase-intent prediction from e-commerce clickstream sessions.

The tracking service dumps sessions as pickled shards: each shard file is a
list of sessions, each session a list of event dicts (timestamp, event type,
item id, price, dwell time). A keras.utils.PyDataset unpickles one shard per
batch and turns the raw event dicts into hashed item-id sequences and
per-session behaviour features for a wide embedding MLP.
"""
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
BATCH = 64
SHARDS = 40
EPOCHS = 9
SEQ = 48
HASH_BUCKETS = 20000
EVENT_TYPES = ["view", "click", "add_to_cart", "remove", "wishlist", "search", "checkout"]
N_NUMERIC = 32


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def write_shards(folder, rng):
    paths = []
    for s in range(SHARDS):
        sessions = []
        for _ in range(BATCH):
            n = int(rng.integers(60, 140))
            t = 1.7e9 + rng.uniform(0, 1e6)
            buyer = rng.random() < 0.3
            events = []
            for _ in range(n):
                t += float(rng.exponential(25.0 if buyer else 40.0))
                p = [0.35, 0.25, 0.12 if buyer else 0.04, 0.05, 0.08, 0.1, 0.05 if buyer else 0.01]
                p = np.array(p) / sum(p)
                events.append({
                    "ts": t,
                    "type": EVENT_TYPES[int(rng.choice(7, p=p))],
                    "item_id": "SKU-%07d" % int(rng.zipf(1.3) % 900000),
                    "price": round(float(rng.lognormal(3.0, 1.0)), 2),
                    "dwell_ms": int(rng.exponential(9000 if buyer else 5000)),
                    "referrer": "https://shop.example/%s" % ("promo" if rng.random() < 0.1 else "home"),
                })
            sessions.append({"session_id": "S%d" % rng.integers(1 << 40),
                             "events": events, "purchased": int(buyer)})
        path = os.path.join(folder, "clicks-%05d.pkl" % s)
        with open(path, "wb") as fh:
            pickle.dump(sessions, fh, protocol=pickle.HIGHEST_PROTOCOL)
        paths.append(path)
    return paths


def session_features(events):
    ids = np.zeros(SEQ, dtype=np.int32)
    tail = events[-SEQ:]
    for i, ev in enumerate(tail):
        ids[SEQ - len(tail) + i] = zlib.crc32(ev["item_id"].encode()) % (HASH_BUCKETS - 1) + 1
    num = np.zeros(N_NUMERIC, dtype=np.float32)
    counts = {k: 0 for k in EVENT_TYPES}
    dwell_hist = [0] * 8
    prices = []
    gaps = []
    prev = None
    promo = 0
    for ev in events:
        counts[ev["type"]] += 1
        b = min(7, int(np.log2(1 + ev["dwell_ms"] / 500.0)))
        dwell_hist[b] += 1
        if ev["type"] in ("add_to_cart", "checkout"):
            prices.append(ev["price"])
        if prev is not None:
            gaps.append(ev["ts"] - prev)
        prev = ev["ts"]
        if ev["referrer"].endswith("promo"):
            promo += 1
    n = float(len(events))
    num[:7] = [counts[k] / n for k in EVENT_TYPES]
    num[7:15] = [h / n for h in dwell_hist]
    g = np.asarray(gaps)
    num[15:20] = [np.log1p(g.mean()), np.log1p(g.std()), np.log1p(np.median(g)),
                  np.log1p(g.max()), np.log1p(n)]
    num[20] = np.log1p(sum(prices)) if prices else 0.0
    num[21] = len(set(ev["item_id"] for ev in events)) / n
    num[22] = promo / n
    return ids, num


class ClickShards(keras.utils.PyDataset):
    def __init__(self, paths, **kwargs):
        super().__init__(**kwargs)
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        with open(self.paths[idx], "rb") as fh:
            sessions = pickle.load(fh)
        ids = np.zeros((len(sessions), SEQ), dtype=np.int32)
        num = np.zeros((len(sessions), N_NUMERIC), dtype=np.float32)
        y = np.zeros((len(sessions), 1), dtype=np.float32)
        for i, s in enumerate(sessions):
            ids[i], num[i] = session_features(s["events"])
            y[i, 0] = s["purchased"]
        return (ids, num), y


def build_model():
    keras.utils.set_random_seed(SEED)
    ids = keras.Input((SEQ,), dtype="int32")
    num = keras.Input((N_NUMERIC,))
    e = keras.layers.Embedding(HASH_BUCKETS, 32)(ids)
    e = keras.layers.Flatten()(e)
    x = keras.layers.Concatenate()([e, num])
    for width in (768, 384):
        x = keras.layers.Dense(width, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([ids, num], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return model


def train(data):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=SHARDS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_pickle_shards_pydataset_clickstream_")
    try:
        paths = write_shards(tmp, rng)
        data = ClickShards(paths)
        full, loss = train(data)
        emit({"steps_per_second": 1.0 / full})
        msg = "clickstream: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            (ids, num), y = data[0]
            batch = ((tf.constant(ids), tf.constant(num)), tf.constant(y))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
