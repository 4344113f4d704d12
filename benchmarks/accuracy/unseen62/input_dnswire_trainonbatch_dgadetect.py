"""Domain-generation-algorithm (DGA) detection from raw DNS query packets.

Data path: a pool of DNS query messages in RFC 1035 wire format (12-byte
header, length-prefixed QNAME labels, QTYPE/QCLASS). A Python loop decodes
each packet of a batch with struct, walks the labels, computes lexical
features (entropy, digit ratio, longest consonant run, vowel ratio, label
count, TLD hash) and a 64-char id sequence, and calls model.train_on_batch
with the two inputs.
Deliberate bottleneck: per-packet Python wire decoding and lexical features.
"""
import time
T0 = time.perf_counter()
import argparse, json, math, os, struct, zlib
from collections import Counter
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 150
MAXLEN = 64
NGRAM = 256
NFEAT = 13 + NGRAM
POOL = 4000
ALPHA = "abcdefghijklmnopqrstuvwxyz0123456789-."
CHAR = {c: i + 1 for i, c in enumerate(ALPHA)}
VOWELS = set("aeiou")


def make_packets(rng):
    words = ["mail", "cdn", "api", "login", "shop", "news", "cloud", "static", "img", "update", "portal", "bank"]
    tlds = ["com", "net", "org", "ru", "info", "xyz", "gov", "io"]
    pkts, labels = [], []
    for i in range(POOL):
        dga = i % 2 == 0
        if dga:
            n = int(rng.integers(8, 24))
            labels_ = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), size=n))]
        else:
            labels_ = [str(rng.choice(words)) for _ in range(int(rng.integers(1, 3)))] + [str(rng.choice(words)) + str(rng.integers(0, 99))]
        labels_.append(str(rng.choice(tlds)))
        header = struct.pack("!HHHHHH", int(rng.integers(0, 65535)), 0x0100, 1, 0, 0, 0)
        q = b"".join(bytes([len(l)]) + l.encode() for l in labels_) + b"\x00" + struct.pack("!HH", 1, 1)
        pkts.append(header + q)
        labels.append(float(dga))
    return pkts, np.asarray(labels, np.float32)


BENIGN = "mail cdn api login shop news cloud static img update portal bank google amazon microsoft service"
BIGRAM_LOGP = {}
for _w in BENIGN.split():
    _w = "^" + _w + "$"
    for _j in range(len(_w) - 1):
        BIGRAM_LOGP[_w[_j:_j + 2]] = BIGRAM_LOGP.get(_w[_j:_j + 2], 0.0) + 1.0
_tot = sum(BIGRAM_LOGP.values())
BIGRAM_LOGP = {k: math.log(v / _tot) for k, v in BIGRAM_LOGP.items()}


def decode(pkt):
    tid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", pkt[:12])
    pos, labels = 12, []
    while True:
        n = pkt[pos]
        if n == 0:
            break
        labels.append(pkt[pos + 1:pos + 1 + n].decode("ascii"))
        pos += 1 + n
    qtype, qclass = struct.unpack("!HH", pkt[pos + 1:pos + 5])
    name = ".".join(labels)
    ids = np.zeros(MAXLEN, np.int32)
    for j, c in enumerate(name[:MAXLEN]):
        ids[j] = CHAR.get(c, 0)
    body = "".join(labels[:-1])
    n = max(len(body), 1)
    ent = -sum((c / n) * math.log2(c / n) for c in Counter(body).values())
    run = best = 0
    for c in body:
        run = run + 1 if (c.isalpha() and c not in VOWELS) else 0
        best = max(best, run)
    feats = [ent / 5, sum(c.isdigit() for c in body) / n, best / 10, sum(c in VOWELS for c in body) / n,
             len(labels) / 5, len(name) / 64, (hash(labels[-1]) % 97) / 97, float(qtype == 1),
             float(flags & 0x0100 > 0), max(len(l) for l in labels) / 30, len(set(body)) / 36, float(qd)]
    grams = [0.0] * NGRAM
    score = 0.0
    padded = "^" + body + "$"
    for j in range(len(padded) - 1):
        score += BIGRAM_LOGP.get(padded[j:j + 2], -8.0)
        if j < len(padded) - 2:
            grams[zlib.crc32(padded[j:j + 3].encode()) % NGRAM] += 1.0
    feats.append(score / (10.0 * n))
    return ids, np.asarray(feats + grams, np.float32)


def build_model():
    ids = keras.Input((MAXLEN,), dtype="int32")
    feats = keras.Input((NFEAT,))
    x = keras.layers.Embedding(len(ALPHA) + 1, 24)(ids)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Concatenate()([x, feats])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model([ids, feats], out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(batches):
    keras.utils.set_random_seed(0)
    model = build_model()
    gaps, last = [], None
    for step in range(STEPS):
        ids, feats, y = batches(step)
        loss = float(model.train_on_batch([ids, feats], y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    pkts, labels = make_packets(np.random.default_rng(62))
    order = np.random.default_rng(1).integers(0, POOL, size=(STEPS, BATCH))

    def from_wire(step):
        idx = order[step]
        ids, feats = zip(*(decode(pkts[i]) for i in idx))
        return np.stack(ids), np.stack(feats), labels[idx]

    full, loss = run(from_wire)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_dnswire_trainonbatch_dgadetect: {sps:.2f} steps/s ({full*1000:.1f} ms/step, loss {loss:.3f})"
    if args.truth:
        fixed = from_wire(0)
        compute, _ = run(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
