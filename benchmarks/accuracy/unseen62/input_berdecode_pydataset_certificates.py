"""TLS certificate risk scoring from DER/BER-encoded certificate blobs.

Data path: a pool of synthetic X.509-like certificates encoded as nested
BER TLV structures (SEQUENCE, INTEGER, PrintableString, UTCTime, OCTET
STRING). A keras.utils.PyDataset decodes every certificate of a batch with a
recursive pure-Python TLV parser, parses validity dates with datetime,
hashes subject/SAN character trigrams into a 512-slot vector and feeds
model.fit.
Deliberate bottleneck: Python BER decoding and trigram hashing in __getitem__.
"""
import time
T0 = time.perf_counter()
import argparse, datetime, json, os, zlib
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 110
EPOCHS = 2
HASH = 512
NUM = 16
POOL = 2000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def tlv(tag, body):
    n = len(body)
    if n < 128:
        ln = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, "big")
        ln = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + ln + body


def encode_cert(rng, i):
    words = ["bank", "secure", "login", "update", "mail", "portal", "gov", "pay", "cloud", "vpn", "id"]
    cn = ".".join(rng.choice(words, size=int(rng.integers(2, 5)))) + rng.choice([".com", ".net", ".gov", ".xyz"])
    sans = [tlv(0x16, (str(rng.choice(words)) + str(k) + "." + cn).encode()) for k in range(int(rng.integers(1, 12)))]
    nb = datetime.datetime(2020, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 1500)))
    na = nb + datetime.timedelta(days=int(rng.integers(7, 800)))
    issuer = tlv(0x30, tlv(0x13, str(rng.choice(["Lets Encrypt R3", "DigiCert G2", "SelfSigned", "Sectigo RSA"])).encode()))
    tbs = tlv(0x30, b"".join([
        tlv(0x02, int(rng.integers(1, 2**62)).to_bytes(8, "big")),
        issuer,
        tlv(0x30, tlv(0x17, nb.strftime("%y%m%d%H%M%SZ").encode()) + tlv(0x17, na.strftime("%y%m%d%H%M%SZ").encode())),
        tlv(0x30, tlv(0x13, cn.encode())),
        tlv(0x02, int(rng.choice([1024, 2048, 4096])).to_bytes(2, "big")),
        tlv(0x30, b"".join(sans)),
        tlv(0x04, rng.bytes(int(rng.integers(64, 300)))),
    ]))
    return tlv(0x30, tbs + tlv(0x03, rng.bytes(256)))


def decode(buf, pos=0, end=None):
    end = len(buf) if end is None else end
    out = []
    while pos < end:
        tag = buf[pos]
        ln = buf[pos + 1]
        pos += 2
        if ln & 0x80:
            k = ln & 0x7F
            ln = int.from_bytes(buf[pos:pos + k], "big")
            pos += k
        body = buf[pos:pos + ln]
        if tag == 0x30:
            out.append(("seq", decode(buf, pos, pos + ln)))
        elif tag in (0x13, 0x16, 0x17):
            out.append(("str", body.decode("ascii")))
        elif tag == 0x02:
            out.append(("int", int.from_bytes(body, "big")))
        else:
            out.append(("bytes", bytes(body)))
        pos += ln
    return out


def featurize(blob):
    cert = decode(blob)[0][1]
    tbs = cert[0][1]
    serial, issuer, validity, subject, keysize, sans, _ext = tbs
    nb = datetime.datetime.strptime(validity[1][0][1], "%y%m%d%H%M%SZ")
    na = datetime.datetime.strptime(validity[1][1][1], "%y%m%d%H%M%SZ")
    cn = subject[1][0][1]
    names = [cn] + [s[1] for s in sans[1]]
    vec = np.zeros(HASH + NUM, np.float32)
    for name in names:
        s = "^" + name + "$"
        for j in range(len(s) - 2):
            vec[zlib.crc32(s[j:j + 3].encode()) % HASH] += 1.0
    days = (na - nb).days
    vec[HASH:] = [days / 800.0, len(sans[1]) / 12.0, keysize[1] / 4096.0, len(cn) / 40.0,
                  float(issuer[1][0][1] == "SelfSigned"), float(cn.endswith(".xyz")), float("login" in cn),
                  float(days < 30), cn.count(".") / 5.0, float(serial[1] % 2), nb.year - 2020, nb.month / 12.0,
                  sum(c.isdigit() for c in "".join(names)) / 50.0, len(names) / 13.0, 0.0, 1.0]
    label = float(issuer[1][0][1] == "SelfSigned" or ("login" in cn and days < 90))
    return vec, label


class CertBatches(keras.utils.PyDataset):
    def __init__(self, blobs, n_batches, seed, **kw):
        super().__init__(**kw)
        self.blobs, self.n, self.seed = blobs, n_batches, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(self.seed * 100003 + i)
        idx = rng.integers(0, len(self.blobs), size=BATCH)
        xs, ys = zip(*(featurize(self.blobs[j]) for j in idx))
        return np.stack(xs), np.asarray(ys, np.float32)


def build_model():
    m = keras.Sequential([keras.Input((HASH + NUM,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(62)
    blobs = [encode_cert(rng, i) for i in range(POOL)]
    data = CertBatches(blobs, STEPS, seed=1)
    full = run(data)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_berdecode_pydataset_certificates: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
    if args.truth:
        x, y = data[0]
        ds = tf.data.Dataset.from_tensors((x, y)).repeat()
        compute = run(ds)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
