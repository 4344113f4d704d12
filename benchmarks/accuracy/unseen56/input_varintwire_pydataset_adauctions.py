"""Real-time-bidding auction logs: predict whether an ad impression is clicked.

Auction records are stored on disk as a length-prefixed stream of
protobuf-style wire-format messages (varint tags, zigzag ints, fixed32
prices, packed repeated segment ids), hand-encoded and hand-decoded in
Python. A keras.utils.PyDataset reads the stream by offset and decodes each
record into hashed-segment and bid-landscape features for model.fit.
"""
import os
import sys
import json
import time
import struct
import random
import shutil
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 224
STEPS = 120
EPOCHS = 3
N_RECORDS = 16000
N_BUCKETS = 512
N_NUM = 32


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


# ---------------------------------------------------------------- wire format
def enc_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def enc_field(num, wtype, payload):
    return enc_varint((num << 3) | wtype) + payload


def encode_auction(rng):
    segs = [rng.randint(0, 2 ** 20) for _ in range(rng.randint(60, 160))]
    bids = [(rng.randint(1, 400), int(rng.lognormvariate(0, 1) * 1e4)) for _ in range(rng.randint(10, 30))]
    floor = rng.lognormvariate(-1, 0.5)
    msg = bytearray()
    msg += enc_field(1, 0, enc_varint(rng.getrandbits(48)))            # auction id
    msg += enc_field(2, 0, enc_varint(zigzag(rng.randint(-720, 720))))  # tz offset (zigzag)
    msg += enc_field(3, 5, struct.pack("<f", floor))                   # floor price
    packed = b"".join(enc_varint(s) for s in segs)
    msg += enc_field(4, 2, enc_varint(len(packed)) + packed)           # packed segments
    for bidder, micros in bids:                                        # repeated submessage
        sub = enc_field(1, 0, enc_varint(bidder)) + enc_field(2, 0, enc_varint(micros))
        msg += enc_field(5, 2, enc_varint(len(sub)) + sub)
    site = ("site-%d.example" % rng.randint(0, 3000)).encode()
    msg += enc_field(6, 2, enc_varint(len(site)) + site)
    msg += enc_field(7, 0, enc_varint(rng.randint(0, 6)))              # device type
    click = int(floor < 0.3 and len(segs) > 110) ^ int(rng.random() < 0.1)
    msg += enc_field(8, 0, enc_varint(click))
    return bytes(msg)


def read_varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def decode_auction(buf):
    pos, end = 0, len(buf)
    rec = {"segs": [], "bids": []}
    while pos < end:
        key, pos = read_varint(buf, pos)
        num, wtype = key >> 3, key & 7
        if wtype == 0:
            val, pos = read_varint(buf, pos)
            if num == 2:
                val = (val >> 1) ^ -(val & 1)
            rec[num] = val
        elif wtype == 5:
            rec[num] = struct.unpack_from("<f", buf, pos)[0]
            pos += 4
        elif wtype == 2:
            ln, pos = read_varint(buf, pos)
            chunk = buf[pos:pos + ln]
            pos += ln
            if num == 4:
                p = 0
                while p < ln:
                    s, p = read_varint(chunk, p)
                    rec["segs"].append(s)
            elif num == 5:
                p, bid = 0, {}
                while p < ln:
                    k, p = read_varint(chunk, p)
                    v, p = read_varint(chunk, p)
                    bid[k >> 3] = v
                rec["bids"].append(bid)
            else:
                rec[num] = bytes(chunk).decode()
    return rec


def features(rec):
    hot = np.zeros(N_BUCKETS, np.float32)
    for s in rec["segs"]:
        hot[(s * 2654435761) % N_BUCKETS] = 1.0
    prices = sorted(b.get(2, 0) / 1e6 for b in rec["bids"])
    num = np.zeros(N_NUM, np.float32)
    num[0] = rec.get(3, 0.0)
    num[1] = rec.get(2, 0) / 720.0
    num[2] = len(rec["segs"]) / 160.0
    num[3] = len(prices) / 30.0
    if prices:
        num[4], num[5] = prices[-1], prices[len(prices) // 2]
        num[6] = prices[-1] - (prices[-2] if len(prices) > 1 else 0.0)
    num[8 + rec.get(7, 0)] = 1.0
    num[16 + zlib.crc32(rec.get(6, "").encode()) % 16] = 1.0
    return hot, num, float(rec.get(8, 0))


class AuctionStream(keras.utils.PyDataset):
    def __init__(self, path, offsets, steps, **kw):
        super().__init__(**kw)
        self.path, self.offsets, self.steps = path, offsets, steps
        self.fh = open(path, "rb")
        self.order = np.random.default_rng(3).permutation(len(offsets))

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        hot = np.zeros((BATCH, N_BUCKETS), np.float32)
        num = np.zeros((BATCH, N_NUM), np.float32)
        y = np.zeros((BATCH, 1), np.float32)
        for j in range(BATCH):
            off = self.offsets[self.order[(idx * BATCH + j) % len(self.order)]]
            self.fh.seek(off)
            head = self.fh.read(5)
            ln, p = read_varint(head, 0)
            self.fh.seek(off + p)
            rec = decode_auction(memoryview(self.fh.read(ln)))
            hot[j], num[j], y[j, 0] = features(rec)
        return (hot, num), y


def write_stream(path, seed):
    rng = random.Random(seed)
    offsets = []
    with open(path, "wb") as fh:
        for _ in range(N_RECORDS):
            msg = encode_auction(rng)
            offsets.append(fh.tell())
            fh.write(enc_varint(len(msg)) + msg)
    return np.asarray(offsets, np.int64)


def build_model():
    keras.utils.set_random_seed(5)
    hot = keras.Input((N_BUCKETS,), name="segments")
    num = keras.Input((N_NUM,), name="numeric")
    a = keras.layers.Dense(512, activation="relu")(hot)
    b = keras.layers.Dense(128, activation="relu")(num)
    x = keras.layers.Concatenate()([a, b])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([hot, num], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


def train(data):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_varintwire_pydataset_adauctions_")
    try:
        t0 = time.perf_counter()
        path = os.path.join(tmp, "auctions.pbstream")
        offsets = write_stream(path, 17)
        full, loss = train(AuctionStream(path, offsets, STEPS))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            (hot, num), y = AuctionStream(path, offsets, STEPS)[0]
            batch = ((tf.constant(hot), tf.constant(num)), tf.constant(y))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_varintwire_pydataset_adauctions: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
