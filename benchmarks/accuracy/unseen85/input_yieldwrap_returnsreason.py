"""Returns-reason classifier for an online fashion retailer.

A Python generator walks the returns log one parcel at a time: it normalises
the customer's free-text reason, tokenises it, hashes the tokens and joins in
order metadata. tf.data.Dataset.from_generator wraps it and model.fit trains
on the batched stream.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import re
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


SEED = 8503
BATCH = 128
STEPS_PER_EPOCH = 120
EPOCHS = 3
SEQ_LEN = 40
VOCAB = 4096
N_META = 10
REASONS = ["too_small", "too_large", "colour_mismatch", "fabric_quality", "late_delivery", "changed_mind"]
PHRASES = {
    0: ["too tight across the shoulders", "runs small", "could not zip it up", "sleeves too short", "waist too snug"],
    1: ["far too baggy", "runs large", "hem drags on the floor", "shoulders too wide", "waist gapes"],
    2: ["colour differs from photo", "navy looks black", "shade is more orange", "not the swatch shown", "dye looks faded"],
    3: ["seams unravelling", "fabric pilled after one wash", "thin see through cotton", "loose threads everywhere", "zip broke"],
    4: ["arrived after the wedding", "parcel was a week late", "missed the event", "courier delayed it", "arrived too late"],
    5: ["no longer needed", "found something else", "bought two sizes", "gift not wanted", "just changed my mind"],
}
FILLER = ["really", "the", "dress", "jacket", "jeans", "it", "was", "and", "very", "shirt", "coat", "sadly", "honestly", "!!", "..."]

rng = np.random.default_rng(SEED)
keras.utils.set_random_seed(SEED)


def make_log(n):
    recs = []
    for i in range(n):
        lab = int(rng.integers(0, len(REASONS)))
        parts = [rng.choice(PHRASES[lab]) for _ in range(int(rng.integers(1, 3)))]
        parts += list(rng.choice(FILLER, size=int(rng.integers(3, 12))))
        rng.shuffle(parts)
        text = " ".join(parts)
        text = text.upper() if rng.random() < 0.1 else text.capitalize()
        meta = {"price": float(rng.uniform(9, 450)), "days": int(rng.integers(1, 60)),
                "size": str(rng.choice(["XS", "S", "M", "L", "XL"])), "channel": str(rng.choice(["web", "app", "store"])),
                "order": f"ORD-{int(rng.integers(10**6, 10**7))}"}
        recs.append((text, json.dumps(meta), lab))
    return recs


RETURNS = make_log(6000)
TOKEN_RE = re.compile(r"[a-z]+")


def encode(text, meta_json):
    text = text.lower().replace("!!", " ").replace("...", " ")
    toks = TOKEN_RE.findall(text)
    ids = np.zeros(SEQ_LEN, dtype=np.int32)
    grams = toks + [a + "_" + b for a, b in zip(toks[:-1], toks[1:])]
    for j, t in enumerate(grams[:SEQ_LEN]):
        ids[j] = 1 + zlib.crc32(t.encode()) % (VOCAB - 1)
    meta = json.loads(meta_json)
    m = np.zeros(N_META, dtype=np.float32)
    m[0] = np.log1p(meta["price"]) / 6.0
    m[1] = meta["days"] / 60.0
    m[2 + ["XS", "S", "M", "L", "XL"].index(meta["size"])] = 1.0
    m[7 + ["web", "app", "store"].index(meta["channel"])] = 1.0
    return ids, m


def returns_stream():
    order = np.random.default_rng(SEED + 1)
    while True:
        i = int(order.integers(0, len(RETURNS)))
        text, meta_json, lab = RETURNS[i]
        ids, m = encode(text, meta_json)
        yield (ids, m), np.int32(lab)


SIG = ((tf.TensorSpec((SEQ_LEN,), tf.int32), tf.TensorSpec((N_META,), tf.float32)), tf.TensorSpec((), tf.int32))


def build_model():
    keras.utils.set_random_seed(SEED)
    tok = keras.Input((SEQ_LEN,), dtype="int32")
    meta = keras.Input((N_META,))
    e = keras.layers.Embedding(VOCAB, 64)(tok)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(e)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Concatenate()([h, meta])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(len(REASONS))(h)
    model = keras.Model([tok, meta], out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    ds = tf.data.Dataset.from_generator(returns_stream, output_signature=SIG).batch(BATCH)
    spf, loss = train(ds)
    emit({"steps_per_second": 1.0 / spf})
    line = f"returnsreason: {EPOCHS}x{STEPS_PER_EPOCH} steps, {spf*1000:.1f} ms/step, loss {loss:.3f}"
    if TRUTH:
        batch = next(iter(tf.data.Dataset.from_generator(returns_stream, output_signature=SIG).batch(BATCH)))
        spc, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
