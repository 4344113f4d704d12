"""Phishing URL classifier.

Input: tf.data pipeline over raw URL strings; each batch is featurized by a
tf.numpy_function (percent-decoding, host/path/query split, char 3-gram
shingle hashing, entropy and lure-word counts in Python). Feeds model.fit.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
import math
import random
import urllib.parse
import zlib

NAME = "input_urlshingle_numpyfunction_phishingurls"
BATCH = 128
STEPS = 20
EPOCHS = 3
NFEAT = 768
NURLS = 20000
REPEAT_PATH = 1      # path segments multiplier (parsing knob)

LURES = ["login", "verify", "secure", "account", "update", "bank", "wallet", "signin", "invoice", "reset"]
TLDS = [".com", ".net", ".org", ".xyz", ".top", ".ru", ".io", ".co.uk"]


def make_urls(n):
    r = random.Random(68)
    urls, labels = [], []
    for _ in range(n):
        bad = r.random() < 0.4
        host = "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(5, 12)))
        if bad:
            host = r.choice(LURES) + "-" + host + "." + r.choice(["paypal", "microsoft", "chase"]) + "-support"
        tld = r.choice(TLDS[3:] if bad else TLDS[:3])
        segs = []
        for _ in range(r.randint(2, 5) * REPEAT_PATH):
            seg = "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(r.randint(3, 10)))
            if bad and r.random() < 0.3:
                seg = r.choice(LURES) + "%2F" + seg
            segs.append(seg)
        q = "&".join(f"{k}={urllib.parse.quote(v)}" for k, v in
                     [("id", str(r.randint(0, 10 ** 9))), ("ref", r.choice(["mail", "sms", "ad", "direct"])),
                      ("next", "https://" + host + tld + "/" + r.choice(LURES))])
        scheme = "http" if bad and r.random() < 0.7 else "https"
        urls.append(f"{scheme}://{host}{tld}/" + "/".join(segs) + "?" + q)
        labels.append(float(bad))
    return np.array(urls), np.array(labels, np.float32)


def url_features(u):
    v = np.zeros(NFEAT, np.float32)
    dec = urllib.parse.unquote(u).lower()
    parts = urllib.parse.urlsplit(dec)
    host, path, query = parts.netloc, parts.path, parts.query
    for field, off, width in ((host, 0, 256), (path, 256, 256), (query, 512, 192)):
        s = "^" + field + "$"
        for i in range(len(s) - 2):
            v[off + zlib.crc32(s[i:i + 3].encode()) % width] += 1.0
        if len(s) > 2:
            v[off:off + width] /= (len(s) - 2)
    counts = {}
    for ch in dec:
        counts[ch] = counts.get(ch, 0) + 1
    ent = -sum(c / len(dec) * math.log2(c / len(dec)) for c in counts.values())
    base = 704
    v[base] = ent / 6.0
    v[base + 1] = len(dec) / 300.0
    v[base + 2] = sum(ch.isdigit() for ch in dec) / len(dec)
    v[base + 3] = host.count("-") / 5.0
    v[base + 4] = host.count(".") / 5.0
    v[base + 5] = float(parts.scheme == "https")
    for j, w in enumerate(LURES):
        v[base + 6 + j] = dec.count(w) / 3.0
    kv = urllib.parse.parse_qs(query)
    v[base + 20] = len(kv) / 5.0
    v[base + 21] = float(any(x.startswith("http") for vals in kv.values() for x in vals))
    return v


def featurize_batch(url_bytes):
    return np.stack([url_features(u.decode()) for u in url_bytes]).astype(np.float32)


def to_features(urls, labels):
    x = tf.numpy_function(featurize_batch, [urls], tf.float32)
    x.set_shape((None, NFEAT))
    return x, tf.reshape(labels, (-1, 1))


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    urls, labels = make_urls(NURLS)
    ds = (tf.data.Dataset.from_tensor_slices((urls, labels)).shuffle(4096, seed=68).repeat()
          .batch(BATCH, drop_remainder=True).map(to_features).prefetch(1))
    full = train(ds)
    compute = None
    if ARGS.truth:
        xb = featurize_batch([u.encode() for u in urls[:BATCH]])
        yb = labels[:BATCH].reshape(-1, 1)
        compute = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
    finish(NAME, full, compute)


if __name__ == "__main__":
    main()
