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
# Supplier invoices arrive as XML documents; a generator parses each with xml.etree,
# extracts line-item features in Python and yields batches to model.fit.
import xml.etree.ElementTree as ET

BATCH, STEPS, EPOCHS, FEAT = 64, 100, 3, 48


def make_docs(rng, n=3000):
    docs = []
    for i in range(n):
        items = "".join(
            f"<item sku='S{int(rng.integers(0, 999))}'><qty>{int(rng.integers(1, 20))}</qty>"
            f"<price>{rng.uniform(1, 500):.2f}</price><tax>{rng.uniform(0, 0.25):.3f}</tax></item>"
            for _ in range(int(rng.integers(10, 40))))
        docs.append(f"<invoice id='{i}'><supplier>{int(rng.integers(0, 50))}</supplier><lines>{items}</lines></invoice>")
    return docs


def features(doc):
    root = ET.fromstring(doc)
    v = np.zeros(FEAT, np.float32)
    sup = int(root.find("supplier").text)
    v[sup % 16] = 1.0
    total = 0.0
    for j, it in enumerate(root.iter("item")):
        q = float(it.find("qty").text); p = float(it.find("price").text); t = float(it.find("tax").text)
        total += q * p * (1 + t)
        v[16 + (hash(it.get("sku")) % 24)] += q
    v[40] = np.log1p(total); v[41] = j
    return v, np.float32(total > 40000)


def gen(docs, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(docs), size=BATCH)
        xs, ys = zip(*(features(docs[i]) for i in idx))
        yield np.stack(xs), np.array(ys)


def build_model():
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(512, activation="relu")(inp)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h))
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    docs = make_docs(np.random.default_rng(32))
    t0 = time.perf_counter()
    timer = StepTimer()
    build_model().fit(gen(docs, 1), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(gen(docs, 2))
        timer2 = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                          epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"input_xmlparse_generator_invoices: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
