"""Social media posts: engagement-bucket classifier; tf.data map calls tf.py_function to tokenize posts.

Bottleneck (input): each batch of raw post strings goes through tf.py_function, where Python
decodes the bytes, normalises unicode-ish text, extracts hashtags/mentions/urls/emoji with regexes
and hashes tokens into vocabulary ids. py_function holds the GIL and runs serially.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

import re
import zlib

SEED = 6503
N_POSTS = 2048
SEQ = 96
VOCAB = 4096
BATCH = 256
STEPS = 40
EPOCHS = 3
WORDS = ("game day workout run gains coffee monday vibes travel sunset beach city food pizza brunch "
         "love hate best worst new drop live now link bio giveaway win follow like share team win "
         "season finals crypto stocks budget save money rent job hiring launch update thread").split()
TOKEN_RE = re.compile(r"(https?://\S+|#\w+|@\w+|[a-z']+|\d+|[^\sa-z0-9])")


def make_posts(rng):
    posts, labels = [], []
    for i in range(N_POSTS):
        n = int(rng.integers(12, 40))
        toks = []
        for _ in range(n):
            r = rng.random()
            w = WORDS[int(rng.integers(0, len(WORDS)))]
            if r < 0.08:
                toks.append("#" + w.capitalize() + str(int(rng.integers(0, 30))))
            elif r < 0.12:
                toks.append("@user_" + str(int(rng.integers(0, 500))))
            elif r < 0.14:
                toks.append("https://t.co/" + "%08x" % int(rng.integers(1 << 31)))
            elif r < 0.18:
                toks.append("!!!")
            else:
                toks.append(w.upper() if rng.random() < 0.1 else w)
        posts.append(" ".join(toks))
        labels.append(int(sum(t.startswith("#") for t in toks) + (n > 25)) % 4)
    return posts, np.array(labels, np.int32)


def tokenize_batch(raw):
    out = np.zeros((len(raw), SEQ + 4), np.int32)
    for row, b in enumerate(raw.numpy()):
        text = b.decode("utf-8").lower()
        text = text.replace("!!!", " <excl> ")
        toks = TOKEN_RE.findall(text)
        ids = []
        n_tags = n_ment = n_url = 0
        for t in toks:
            if t.startswith("http"):
                n_url += 1
                t = "<url>"
            elif t.startswith("#"):
                n_tags += 1
                ids.append(1 + zlib.crc32(t.encode()) % (VOCAB - 1))
                t = t[1:]
            elif t.startswith("@"):
                n_ment += 1
                t = "<user>"
            ids.append(1 + zlib.crc32(t.encode()) % (VOCAB - 1))
            # fastText-style character trigrams for rare/misspelled tokens (slang, elongations)
            if len(t) > 5:
                w = "<" + t + ">"
                for j in range(len(w) - 2):
                    ids.append(1 + zlib.crc32(w[j:j + 3].encode()) % (VOCAB - 1))
        ids = ids[:SEQ]
        out[row, :len(ids)] = ids
        out[row, SEQ:] = [min(n_tags, 20), min(n_ment, 20), min(n_url, 20), min(len(toks), 100)]
    return out


def build_model():
    inp = keras.Input((SEQ + 4,), dtype="int32")
    tok = keras.layers.Lambda(lambda t: t[:, :SEQ])(inp)
    cnt = keras.layers.Lambda(lambda t: tf.cast(t[:, SEQ:], tf.float32) / 20.0)(inp)
    x = keras.layers.Embedding(VOCAB, 32)(tok)
    x = keras.layers.Conv1D(16, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Concatenate()([x, cnt])
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    posts, labels = make_posts(np.random.default_rng(SEED))

    def tok_map(text, y):
        ids = tf.py_function(tokenize_batch, [text], tf.int32)
        ids.set_shape((None, SEQ + 4))
        return ids, y

    ds = (tf.data.Dataset.from_tensor_slices((posts, labels)).shuffle(N_POSTS, seed=SEED)
          .repeat().batch(BATCH).map(tok_map))

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[socialposts] py_function tokenize fit: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb = tokenize_batch(tf.constant(posts[:BATCH]))
        one = tf.data.Dataset.from_tensors((xb, labels[:BATCH])).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[socialposts] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
