import time; T0 = time.perf_counter()
"""Luthier workshop job-card routing, keras.utils.PyDataset (workers=1) -> fit.

Repair shops write a free-text job card at intake ("Martin D-28, top crack
below bridge, needs cleats + humidify, action high at 12th"). A synthetic card
generator builds such cards from templates; the PyDataset's __getitem__ takes
a batch of raw card strings and tokenises them in pure Python: lower-casing,
unit normalisation, regex word split, hashed word and word-bigram ids into a
fixed vocabulary, padding/truncation. The model routes each card to a bench
(setup, fretwork, crack/structural, finish, electronics, bow rehair).
"""
import json
import os
import re
import sys
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


VOCAB = 8192
SEQ_LEN = 160
BATCH = 128
STEPS_PER_EPOCH = 450
EPOCHS = 3

INSTRUMENTS = ["Martin D-28", "Gibson Les Paul Std", "Fender Strat '62 RI", "Taylor 814ce",
               "Yamaha FG180", "Stradivari-pattern violin", "German trade viola 1890",
               "Kay upright bass", "Höfner 500/1", "classical guitar (Ramirez 1a)", "cello, Mirecourt"]
BENCHES = {
    0: ["action high at {n}th fret", "truss rod adjust, relief {m}mm", "intonation off on G string",
        "new nut, slots cut too low", "string height {m}mm at 12th"],
    1: ["fret buzz frets {n}-{k}", "full refret, stainless", "level crown polish", "lifted fret {n}",
        "worn frets under {n} and {k}"],
    2: ["top crack below bridge {m}mm", "needs cleats", "bridge lifting", "neck reset, angle low",
        "loose brace near soundhole", "seam open lower bout", "soundpost crack"],
    3: ["finish check lines", "touch up nitro", "french polish top", "varnish wear at shoulder",
        "buckle rash on back"],
    4: ["output jack crackles", "pickup dead, rewind", "pot scratchy", "replace piezo undersaddle",
        "ground hum"],
    5: ["bow rehair", "bow tip cracked", "new bow grip + winding", "frog slide loose"],
}
FILLER = ["customer says", "urgent", "humidify", "please call before work", "est. {n} hrs",
          "left in case", "strings D'Addario {n}-{k}", "ok to proceed", "quote ${n}0"]
UNITS = [(re.compile(r"(\d+(?:\.\d+)?)\s*mm"), r"\1 <mm>"), (re.compile(r"\$(\d+)"), r"<usd> \1"),
         (re.compile(r"(\d+)(st|nd|rd|th)\b"), r"\1 <ord>")]
TOKEN_RE = re.compile(r"[a-zäöü<>']+|\d+")


def write_card(rng):
    bench = int(rng.integers(0, 6))
    parts = [INSTRUMENTS[int(rng.integers(len(INSTRUMENTS)))]]
    for _ in range(int(rng.integers(3, 7))):
        pool = BENCHES[bench] if rng.random() < 0.7 else FILLER
        parts.append(pool[int(rng.integers(len(pool)))])
    text = ", ".join(parts).format(n=int(rng.integers(1, 22)), k=int(rng.integers(1, 22)),
                                   m=round(float(rng.uniform(0.1, 4.0)), 1))
    return text, bench


def tokenize(text):
    text = text.lower()
    for pat, rep in UNITS:
        text = pat.sub(rep, text)
    words = TOKEN_RE.findall(text)
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in words]
    ids += [1 + zlib.crc32((a + "_" + b).encode()) % (VOCAB - 1) for a, b in zip(words, words[1:])]
    for n in (3, 4, 5):                                     # character n-grams of each word
        for w in words:
            padded = "#" + w + "#"
            ids += [1 + zlib.crc32(padded[i:i + n].encode()) % (VOCAB - 1)
                    for i in range(len(padded) - n + 1)]
    ids = ids[:SEQ_LEN]
    return ids + [0] * (SEQ_LEN - len(ids))


class JobCardBatches(keras.utils.PyDataset):
    def __init__(self, seed, n_batches, **kwargs):
        super().__init__(**kwargs)
        self.seed, self.n_batches = seed, n_batches

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        cards = [write_card(rng) for _ in range(BATCH)]
        x = np.asarray([tokenize(text) for text, _ in cards], dtype=np.int32)
        y = np.asarray([b for _, b in cards], dtype=np.int32)
        return x, y


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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 32)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(6, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(data, **fit_kwargs):
    keras.utils.set_random_seed(13)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **fit_kwargs)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    cards = JobCardBatches(seed=4, n_batches=STEPS_PER_EPOCH, workers=1, use_multiprocessing=False)
    sec, loss = train(cards)
    emit({"steps_per_second": 1.0 / sec})
    summary = f"luthiercards PyDataset fit: {EPOCHS}x{STEPS_PER_EPOCH} steps, {sec*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        batch = JobCardBatches(seed=9, n_batches=1)[0]
        csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS_PER_EPOCH)
        frac = min(max((sec - csec) / sec, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(summary + f", total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
