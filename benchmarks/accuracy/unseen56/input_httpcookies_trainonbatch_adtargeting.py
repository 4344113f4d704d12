"""Display-ad targeting: predict ad-click probability from request cookies.

Every ad request carries a raw Cookie header (audience segments, experiment
buckets, frequency-cap counters, URL-encoded JSON preferences and a base64
consent bitfield). A plain Python loop parses each header with
http.cookies.SimpleCookie, urllib.parse.unquote, json and base64, builds
hashed feature vectors, and calls model.train_on_batch on every batch.
"""
import os
import sys
import json
import time
import base64
import random
import shutil
import tempfile
import zlib
import http.cookies
import urllib.parse

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 96
STEPS = 600
N_REQ = 8000
N_HASH = 1024
N_NUM = 48


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_cookie(rng):
    parts = []
    segs = ".".join(str(rng.randint(1000, 99999)) for _ in range(rng.randint(3, 25)))
    parts.append("aud_seg=%s" % segs)
    for e in range(rng.randint(4, 12)):
        parts.append("exp_%d=%s" % (rng.randint(100, 999), rng.choice("ABCD")))
    for c in range(rng.randint(6, 24)):
        parts.append("fcap_%05d=%d" % (rng.randint(0, 99999), rng.randint(0, 12)))
    prefs = {"lang": rng.choice(["en-US", "de-DE", "fr-FR", "es-ES"]), "cur": rng.choice(["USD", "EUR"]),
             "cats": [rng.randint(1, 60) for _ in range(rng.randint(1, 6))], "dark": rng.random() < 0.3}
    parts.append("prefs=%s" % urllib.parse.quote(json.dumps(prefs, separators=(",", ":"))))
    bits = bytes(rng.getrandbits(8) for _ in range(12))
    parts.append('consent="%s"' % base64.urlsafe_b64encode(bits).decode())
    parts.append("last_seen=%d" % (1764900000 + rng.randint(-9 * 86400, 0)))
    parts.append("_ga=GA1.2.%d.%d" % (rng.getrandbits(31), 1764000000 + rng.randint(0, 900000)))
    parts.append("cart_items=%d" % rng.randint(0, 9))
    rng.shuffle(parts)
    click = float((len(segs) > 60 and "cart_items=0" not in parts) ^ (rng.random() < 0.1))
    return "; ".join(parts), click


def featurize(header):
    jar = http.cookies.SimpleCookie()
    jar.load(header)
    hot = np.zeros(N_HASH, np.float32)
    num = np.zeros(N_NUM, np.float32)
    for name, morsel in jar.items():
        val = morsel.value
        if name == "aud_seg":
            segs = val.split(".")
            num[0] = len(segs) / 25.0
            for s in segs:
                hot[zlib.crc32(("seg" + s).encode()) % N_HASH] = 1.0
        elif name.startswith("exp_"):
            hot[zlib.crc32((name + "=" + val).encode()) % N_HASH] = 1.0
            num[1] += 1
        elif name.startswith("fcap_"):
            num[2] += int(val) / 12.0
            num[3] = max(num[3], int(val) / 12.0)
        elif name == "prefs":
            prefs = json.loads(urllib.parse.unquote(val))
            hot[zlib.crc32(("lang" + prefs["lang"]).encode()) % N_HASH] = 1.0
            hot[zlib.crc32(("cur" + prefs["cur"]).encode()) % N_HASH] = 1.0
            for c in prefs["cats"]:
                hot[zlib.crc32(b"cat%d" % c) % N_HASH] = 1.0
            num[4] = float(prefs["dark"])
        elif name == "consent":
            bits = np.unpackbits(np.frombuffer(base64.urlsafe_b64decode(val), np.uint8))
            num[8:8 + 32] = bits[:32]
        elif name == "last_seen":
            num[5] = (1764900000 - int(val)) / (9 * 86400.0)
        elif name == "cart_items":
            num[6] = int(val) / 9.0
        elif name == "_ga":
            num[7] = (int(val.split(".")[-1]) - 1764000000) / 900000.0
    return hot, num


def build_model():
    keras.utils.set_random_seed(31)
    hot = keras.Input((N_HASH,), name="hashed")
    num = keras.Input((N_NUM,), name="numeric")
    x = keras.layers.Concatenate()([keras.layers.Dense(512, activation="relu")(hot),
                                    keras.layers.Dense(64, activation="relu")(num)])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([hot, num], out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def make_batch(headers, labels, rng):
    idx = rng.integers(0, len(headers), BATCH)
    hot = np.zeros((BATCH, N_HASH), np.float32)
    num = np.zeros((BATCH, N_NUM), np.float32)
    for j, i in enumerate(idx):
        hot[j], num[j] = featurize(headers[i])
    return hot, num, labels[idx]


def run(next_batch):
    model = build_model()
    stamps = []
    loss = 0.0
    for _ in range(STEPS):
        hot, num, y = next_batch()
        loss = float(model.train_on_batch([hot, num], y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_httpcookies_trainonbatch_adtargeting_")
    try:
        t0 = time.perf_counter()
        rng = random.Random(44)
        pairs = [make_cookie(rng) for _ in range(N_REQ)]
        headers = [p[0] for p in pairs]
        labels = np.asarray([p[1] for p in pairs], np.float32)
        nrng = np.random.default_rng(6)
        full, loss = run(lambda: make_batch(headers, labels, nrng))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            fixed = make_batch(headers, labels, np.random.default_rng(6))
            comp, _ = run(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_httpcookies_trainonbatch_adtargeting: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
