"""Peer-quality scoring for a BitTorrent tracker: each sample is a bencoded
peer-exchange (PEX) message kept as raw bytes in a shard file on disk.  A
Python generator reads the shard, decodes the bencode with a hand-written
recursive parser, aggregates per-peer fields into 48 features and feeds
model.fit through tf.data.Dataset.from_generator."""
import os, sys, json, time, random, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, NMSG, PEERS = 128, 80, 3, 4096, 10


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def benc(x):
    if isinstance(x, int):
        return b"i%de" % x
    if isinstance(x, bytes):
        return b"%d:%s" % (len(x), x)
    if isinstance(x, list):
        return b"l" + b"".join(benc(v) for v in x) + b"e"
    return b"d" + b"".join(benc(k) + benc(v) for k, v in sorted(x.items())) + b"e"


def bdec(s, i=0):
    c = s[i:i + 1]
    if c == b"i":
        j = s.index(b"e", i)
        return int(s[i + 1:j]), j + 1
    if c == b"l" or c == b"d":
        i += 1; out = []
        while s[i:i + 1] != b"e":
            v, i = bdec(s, i); out.append(v)
        if c == b"l":
            return out, i + 1
        return dict(zip(out[0::2], out[1::2])), i + 1
    j = s.index(b":", i)
    n = int(s[i:j])
    return s[j + 1:j + 1 + n], j + 1 + n


def make_shard(path, rng):
    offs = []
    with open(path, "wb") as f:
        for m in range(NMSG):
            peers = []
            for p in range(PEERS):
                peers.append({b"ip": bytes(rng.randrange(256) for _ in range(4)),
                              b"port": rng.randrange(1024, 65535),
                              b"up": rng.randrange(10 ** 7), b"down": rng.randrange(10 ** 7),
                              b"rtt": rng.randrange(5, 900), b"flags": rng.randrange(64),
                              b"client": b"qB-4.%d" % rng.randrange(9)})
            msg = benc({b"added": peers, b"dropped": [rng.randrange(10 ** 6) for _ in range(8)],
                        b"seq": m})
            offs.append((f.tell(), len(msg)))
            f.write(msg)
    return offs


def features(msg):
    d, _ = bdec(msg)
    peers = d[b"added"]
    cols = np.zeros((len(peers), 6), np.float32)
    for k, p in enumerate(peers):
        cols[k] = (np.log1p(p[b"up"]), np.log1p(p[b"down"]), p[b"rtt"] / 900.0,
                   bin(p[b"flags"]).count("1") / 6.0, p[b"port"] / 65535.0, p[b"ip"][0] / 255.0)
    f = np.concatenate([cols.mean(0), cols.std(0), cols.min(0), cols.max(0),
                        np.percentile(cols, [25, 50, 75], axis=0).ravel(),
                        [len(d[b"dropped"]) / 8.0] * 6]).astype(np.float32)
    y = np.float32(cols[:, 0].mean() > cols[:, 1].mean())
    return f, y


def build():
    keras.utils.set_random_seed(7)
    m = keras.Sequential([keras.Input((48,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    m.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_bencode_fromgen_torrentpeers_")
    try:
        rng = random.Random(46)
        path = os.path.join(tmp, "pex.shard")
        offs = make_shard(path, rng)

        def gen():
            r = np.random.default_rng(1)
            with open(path, "rb") as fh:
                while True:
                    for i in r.permutation(len(offs)):
                        o, n = offs[i]; fh.seek(o)
                        yield features(fh.read(n))

        sig = (tf.TensorSpec((48,), tf.float32), tf.TensorSpec((), tf.float32))
        ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)
        t0 = time.perf_counter()
        timer = StepTimer()
        hist = build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = "loss=%.4f sec/step=%.4f" % (hist.history["loss"][-1], full)
        if truth:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            t2 = StepTimer()
            build().fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_bencode_fromgen_torrentpeers: %s wall_fit=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
