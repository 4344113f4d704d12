"""Network intrusion detection from raw packet captures.

Data path: a pool of synthetic Ethernet/IPv4/TCP packets kept as raw bytes.
A Python generator assembles each flow (24 packets), unpacks every header with
struct, computes per-packet features (lengths, TTL, ports, TCP flag bits,
window, payload byte entropy) and yields one flow at a time through
tf.data.Dataset.from_generator -> batch -> model.fit.
Deliberate bottleneck: per-packet Python header parsing and entropy counting.
"""
import time
T0 = time.perf_counter()
import argparse, json, math, os, struct, sys
from collections import Counter
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 55
EPOCHS = 2
PKTS = 24
FEAT = 14
POOL = 3000


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


def build_pool(rng):
    pkts = []
    for i in range(POOL):
        plen = int(rng.integers(40, 200))
        payload = rng.integers(0, 256 if i % 3 else 64, size=plen, dtype=np.uint8).tobytes()
        eth = struct.pack("!6s6sH", rng.bytes(6), rng.bytes(6), 0x0800)
        total = 20 + 20 + plen
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, int(rng.integers(0, 65535)), 0x4000,
                         int(rng.integers(30, 128)), 6, 0, rng.bytes(4), rng.bytes(4))
        flags = int(rng.integers(0, 64))
        tcp = struct.pack("!HHLLBBHHH", int(rng.integers(1024, 65535)), int(rng.choice([22, 80, 443, 3389, 445])),
                          int(rng.integers(0, 2**32 - 1)), int(rng.integers(0, 2**32 - 1)), 5 << 4, flags,
                          int(rng.integers(0, 65535)), 0, 0)
        pkts.append(eth + ip + tcp + payload)
    return pkts


def parse_packet(raw):
    _dst, _src, etype = struct.unpack("!6s6sH", raw[:14])
    ver_ihl, _tos, total, _ident, frag, ttl, proto, _ck, src, dst = struct.unpack("!BBHHHBBH4s4s", raw[14:34])
    ihl = (ver_ihl & 0x0F) * 4
    t = 14 + ihl
    sport, dport, seq, ack, off, flags, win, _c, _u = struct.unpack("!HHLLBBHHH", raw[t:t + 20])
    payload = raw[t + (off >> 4) * 4:]
    n = len(payload)
    ent = 0.0
    if n:
        for c in Counter(payload).values():
            p = c / n
            ent -= p * math.log2(p)
    printable = sum(1 for b in payload if 32 <= b < 127) / max(n, 1)
    return [total / 1500.0, ttl / 255.0, sport / 65535.0, dport / 65535.0,
            (flags >> 0) & 1, (flags >> 1) & 1, (flags >> 2) & 1, (flags >> 3) & 1, (flags >> 4) & 1,
            win / 65535.0, ent / 8.0, printable, float(dst[0] == 10), float(etype == 0x0800)]


def flow_generator(pool, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(pool), size=PKTS)
        feats = np.asarray([parse_packet(pool[i]) for i in idx], dtype=np.float32)
        label = np.float32(feats[:, 10].mean() > 0.8)
        yield feats, label


def build_model():
    inp = keras.Input((PKTS, FEAT))
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(768, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    pool = build_pool(np.random.default_rng(62))
    sig = (tf.TensorSpec((PKTS, FEAT), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.from_generator(lambda: flow_generator(pool, 1), output_signature=sig)
    ds = ds.batch(BATCH).prefetch(1)
    full = run(ds)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_pcapstruct_fromgen_intrusion: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
