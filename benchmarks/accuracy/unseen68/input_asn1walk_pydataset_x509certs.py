"""X.509 certificate triage (suspicious vs. benign TLS certificates).

Input: a keras.utils.PyDataset that base64-decodes PEM blobs and walks the
DER TLV tree in Python, hashing OIDs, names and SAN entries. Feeds model.fit.
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
import base64
import random
import zlib

NAME = "input_asn1walk_pydataset_x509certs"
BATCH = 128
STEPS = 20
EPOCHS = 3
NFEAT = 512
NCERTS = 4000
NSAN = 12            # SAN entries per certificate (parsing knob)


def tlv(tag, payload):
    n = len(payload)
    if n < 128:
        ln = bytes([n])
    elif n < 256:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + ln + payload


def oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    out = bytearray([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        enc = [p & 0x7F]
        p >>= 7
        while p:
            enc.append(0x80 | (p & 0x7F))
            p >>= 7
        out.extend(reversed(enc))
    return tlv(0x06, bytes(out))


def make_cert(r):
    bad = r.random() < 0.35
    cn = ("secure-login-" if bad else "www.") + "".join(r.choice("abcdefghijklmnop") for _ in range(8)) + (".xyz" if bad else ".com")
    issuer = cn if bad and r.random() < 0.6 else r.choice(["DigiCert TLS RSA", "Let's Encrypt R3", "Sectigo RSA DV", "GlobalSign GCC"])
    name = lambda s: tlv(0x30, tlv(0x31, tlv(0x30, oid("2.5.4.3") + tlv(0x0C, s.encode()))))
    nb = "2026%02d%02d000000Z" % (r.randint(1, 12), r.randint(1, 28))
    days = r.randint(1, 30) if bad else r.randint(60, 398)
    na = "2027%02d%02d000000Z" % (r.randint(1, 12), r.randint(1, 28))
    validity = tlv(0x30, tlv(0x17, nb[2:].encode()) + tlv(0x17, na[2:].encode()))
    sans = b"".join(tlv(0x82, (f"h{i}-" + cn).encode()) for i in range(NSAN if bad else NSAN // 2))
    ext = tlv(0xA3, tlv(0x30, tlv(0x30, oid("2.5.29.17") + tlv(0x04, tlv(0x30, sans)))
                      + tlv(0x30, oid("2.5.29.19") + tlv(0x04, tlv(0x30, tlv(0x01, b"\x00"))))))
    key = bytes(r.getrandbits(8) for _ in range(128 if bad else 256))
    spki = tlv(0x30, tlv(0x30, oid("1.2.840.113549.1.1.1")) + tlv(0x03, b"\x00" + key))
    tbs = tlv(0x30, tlv(0x02, r.getrandbits(64).to_bytes(8, "big")) + tlv(0x30, oid("1.2.840.113549.1.1.11"))
              + name(issuer) + validity + name(cn) + spki + ext)
    der = tlv(0x30, tbs + tlv(0x30, oid("1.2.840.113549.1.1.11")) + tlv(0x03, b"\x00" + bytes(64)))
    b64 = base64.b64encode(der).decode()
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64)) + "\n-----END CERTIFICATE-----\n"
    return pem, days, float(bad)


def walk(buf, pos, end, depth, out):
    while pos < end:
        tag = buf[pos]
        ln = buf[pos + 1]
        pos += 2
        if ln & 0x80:
            k = ln & 0x7F
            ln = int.from_bytes(buf[pos:pos + k], "big")
            pos += k
        body = buf[pos:pos + ln]
        out.append((tag, depth, body))
        if tag in (0x30, 0x31, 0xA3) or (tag == 0x04 and body[:1] == b"\x30"):
            walk(buf, pos, pos + ln, depth + 1, out)
        pos += ln


def decode_oid(b):
    parts = [b[0] // 40, b[0] % 40]
    v = 0
    for c in b[1:]:
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            parts.append(v)
            v = 0
    return ".".join(map(str, parts))


def featurize(pem, days):
    body = "".join(l for l in pem.splitlines() if not l.startswith("-----"))
    der = base64.b64decode(body)
    nodes = []
    walk(der, 0, len(der), 0, nodes)
    v = np.zeros(NFEAT, np.float32)
    for tag, depth, b in nodes:
        v[(tag * 7 + depth) % 64] += 1
        if tag == 0x06:
            v[64 + zlib.crc32(decode_oid(b).encode()) % 64] += 1
        elif tag in (0x0C, 0x82):
            s = b.decode("utf-8", "replace").lower()
            for i in range(len(s) - 2):
                v[128 + zlib.crc32(s[i:i + 3].encode()) % 360] += 1
        elif tag == 0x03:
            v[490] = len(b) / 256.0
            v[491] = len(set(b)) / 256.0
    v[500] = days / 398.0
    v[501] = len(nodes) / 100.0
    v[128:488] /= max(1.0, v[128:488].sum())
    return v


class CertBatches(keras.utils.PyDataset):
    def __init__(self, certs, seed, **kw):
        super().__init__(**kw)
        self.certs = certs
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        r = random.Random(self.seed * 100003 + idx)
        xs = np.zeros((BATCH, NFEAT), np.float32)
        ys = np.zeros((BATCH, 1), np.float32)
        for b in range(BATCH):
            pem, days, lab = self.certs[r.randrange(len(self.certs))]
            xs[b] = featurize(pem, days)
            ys[b, 0] = lab
        return xs, ys


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(data, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    r = random.Random(68)
    certs = [make_cert(r) for _ in range(NCERTS)]
    full = train(CertBatches(certs, 1))
    compute = None
    if ARGS.truth:
        xb, yb = CertBatches(certs, 2)[0]
        compute = train(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps=STEPS)
    finish(NAME, full, compute)


if __name__ == "__main__":
    main()
