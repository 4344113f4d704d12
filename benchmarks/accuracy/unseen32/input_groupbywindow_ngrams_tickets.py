import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Support-ticket triage: raw ticket texts -> string n-gram hashing per example, then
# tf.data group_by_window buckets tickets by length and pads each bucket's batch.
BATCH, STEPS, EPOCHS, BUCKETS, VOCAB = 64, 120, 3, 2 ** 15, 2000
WORDS = np.array(["printer", "login", "vpn", "error", "reset", "password", "slow", "crash", "email",
                  "screen", "network", "urgent", "please", "help", "server", "update", "disk", "ticket",
                  "access", "denied", "timeout", "install", "license", "laptop", "monitor", "cannot"])


def make_texts(rng, n=20000):
    texts, labels = [], []
    for _ in range(n):
        k = int(rng.integers(5, 120))
        w = WORDS[rng.integers(0, len(WORDS), size=k)]
        texts.append(" ".join(w))
        labels.append(int(("crash" in w) or ("denied" in w and k > 40)))
    return np.array(texts), np.array(labels, dtype=np.int32)


def featurize(text, label):
    toks = tf.strings.split(tf.strings.lower(text))
    uni = tf.strings.to_hash_bucket_fast(toks, BUCKETS)
    bi = tf.strings.to_hash_bucket_fast(tf.strings.ngrams(toks, 2, separator="_"), BUCKETS)
    tri = tf.strings.to_hash_bucket_fast(tf.strings.ngrams(toks, 3, separator="_"), BUCKETS)
    ids = tf.concat([uni, bi, tri], axis=0)
    return ids, label


def key_fn(ids, label):
    return tf.cast(tf.minimum(tf.shape(ids)[0] // 60, 5), tf.int64)


def reduce_fn(key, window):
    return window.padded_batch(BATCH, padded_shapes=([None], []))


def build_model():
    inp = keras.Input((None,), dtype="int64")
    h = keras.layers.Embedding(BUCKETS, 32)(inp)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h))
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    texts, labels = make_texts(rng)
    ds = (tf.data.Dataset.from_tensor_slices((texts, labels)).shuffle(5000, seed=2).repeat()
          .map(featurize)
          .group_by_window(key_func=key_fn, reduce_func=reduce_fn, window_size=BATCH)
          .prefetch(2))
    t0 = time.perf_counter()
    timer = StepTimer()
    build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        timer2 = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                          epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"input_groupbywindow_ngrams_tickets: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
