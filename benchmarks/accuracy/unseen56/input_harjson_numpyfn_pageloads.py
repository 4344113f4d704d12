"""Storefront page-load telemetry: predict whether a product-page visit bounces.

Real-user monitoring uploads one HAR (HTTP Archive) JSON document per page
load. The documents sit in memory as a string tensor; a tf.data map runs
tf.numpy_function with json.loads, walks every request entry, and rasterises
the request waterfall into a per-resource-type timing grid plus summary
statistics, which a small Conv1D model consumes via model.fit.
"""
import os
import sys
import json
import time
import random
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 85
EPOCHS = 3
N_PAGES = 2500
BINS = 96
TYPES = ["document", "script", "stylesheet", "image", "font", "xhr", "media", "other"]
N_STATS = 24


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_har(rng):
    n = rng.randint(40, 120)
    t = 0.0
    entries = []
    slow = rng.random() < 0.35
    for i in range(n):
        kind = TYPES[0] if i == 0 else rng.choice(TYPES[1:])
        t += rng.expovariate(1 / (40.0 if slow else 15.0))
        timings = {"blocked": round(rng.uniform(0, 5), 3), "dns": round(rng.uniform(0, 30) if i < 5 else -1, 3),
                   "connect": round(rng.uniform(5, 60), 3), "ssl": round(rng.uniform(5, 40), 3),
                   "send": round(rng.uniform(0, 2), 3), "wait": round(rng.expovariate(1 / (120.0 if slow else 50.0)), 3),
                   "receive": round(rng.expovariate(1 / 20.0), 3)}
        size = int(rng.lognormvariate(9, 1.2))
        entries.append({
            "startedDateTime": "2026-12-05T10:%02d:%06.3fZ" % (int(t // 60000) % 60, (t / 1000.0) % 60),
            "time": sum(v for v in timings.values() if v > 0),
            "_resourceType": kind,
            "request": {"method": "GET", "url": "https://cdn.shop.example/%s/%08x" % (kind, rng.getrandbits(32)),
                        "httpVersion": "h2", "headers": [{"name": "accept", "value": "*/*"},
                                                        {"name": "user-agent", "value": "Mozilla/5.0"}],
                        "headersSize": -1, "bodySize": 0},
            "response": {"status": rng.choice([200] * 20 + [304, 404]), "httpVersion": "h2",
                         "headers": [{"name": "content-type", "value": kind},
                                     {"name": "cache-control", "value": "max-age=%d" % rng.randint(0, 86400)}],
                         "content": {"size": size, "compression": int(size * rng.uniform(0, 0.7)),
                                     "mimeType": kind},
                         "bodySize": size, "headersSize": 300},
            "cache": {}, "timings": timings, "_offset_ms": round(t, 3)})
    doc = {"log": {"version": "1.2", "creator": {"name": "rum-agent", "version": "3.1"},
                   "pages": [{"id": "page_1", "title": "product",
                              "pageTimings": {"onContentLoad": round(t * 0.6, 1), "onLoad": round(t, 1)}}],
                   "entries": entries}}
    bounce = float((t > 1500) ^ (rng.random() < 0.15))
    return json.dumps(doc), bounce


def parse_har(raw):
    doc = json.loads(raw.decode("utf-8"))
    log = doc["log"]
    grid = np.zeros((BINS, len(TYPES)), np.float32)
    stats = np.zeros(N_STATS, np.float32)
    onload = max(log["pages"][0]["pageTimings"]["onLoad"], 1.0)
    for e in log["entries"]:
        k = TYPES.index(e["_resourceType"]) if e["_resourceType"] in TYPES else len(TYPES) - 1
        start = e["_offset_ms"]
        tm = e["timings"]
        dur = sum(v for v in tm.values() if v > 0)
        b0 = int(BINS * min(start / onload, 0.999))
        b1 = int(BINS * min((start + dur) / onload, 0.999))
        grid[b0:b1 + 1, k] += 1.0
        stats[0] += tm["wait"]
        stats[1] += tm["receive"]
        stats[2] += max(tm["dns"], 0)
        stats[3] += tm["connect"] + tm["ssl"]
        c = e["response"]["content"]
        stats[4] += np.log1p(c["size"])
        stats[5] += c["compression"] / max(c["size"], 1)
        stats[6 + min(e["response"]["status"] // 100, 5)] += 1
        for h in e["response"]["headers"]:
            if h["name"] == "cache-control":
                stats[12] += float(h["value"].split("=")[1]) / 86400.0
        stats[13 + k] += dur / 1000.0
    n = len(log["entries"])
    stats[:13] /= n
    stats[21] = n / 120.0
    stats[22] = onload / 3000.0
    stats[23] = log["pages"][0]["pageTimings"]["onContentLoad"] / onload
    return grid / 8.0, stats


def make_dataset(docs, labels):
    ds = tf.data.Dataset.from_tensor_slices((docs, labels)).shuffle(len(labels), seed=4).repeat()

    def parse(raw, y):
        grid, stats = tf.numpy_function(parse_har, [raw], [tf.float32, tf.float32])
        grid.set_shape((BINS, len(TYPES)))
        stats.set_shape((N_STATS,))
        return (grid, stats), y

    return ds.map(parse).batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(9)
    g = keras.Input((BINS, len(TYPES)), name="waterfall")
    s = keras.Input((N_STATS,), name="stats")
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(g)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Concatenate()([x, keras.layers.Dense(64, activation="relu")(s)])
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([g, s], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_harjson_numpyfn_pageloads_")
    try:
        t0 = time.perf_counter()
        rng = random.Random(21)
        pairs = [make_har(rng) for _ in range(N_PAGES)]
        docs = tf.constant([p[0] for p in pairs])
        labels = tf.constant([p[1] for p in pairs], tf.float32)
        full, loss = train(make_dataset(docs, labels))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            batch = next(iter(make_dataset(docs, labels)))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_harjson_numpyfn_pageloads: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
