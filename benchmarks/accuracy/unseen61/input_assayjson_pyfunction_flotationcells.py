"""Froth-flotation recovery forecaster; tf.data map over batches with tf.py_function.

Each record is a JSON document from a flotation cell historian: a list of per-minute dicts
(air flow, froth depth, pulp level, reagent dosing, froth colour, feed grade). The
dataset batches raw JSON strings and a tf.py_function decodes them with json.loads,
forward-fills missing tags, and rescales in Python. That decoding is the bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 32
STEPS = 200
EPOCHS = 2
MINUTES = 90
TAGS = ["air_flow", "froth_depth", "pulp_level", "xanthate", "frother", "froth_rgb", "feed_grade"]
SCALE = np.array([400, 300, 1000, 50, 20, 255, 5], np.float32)
POOL = 600


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_records(rng):
    docs, rec = [], []
    for i in range(POOL):
        base = rng.uniform(0.5, 1.5, len(TAGS)) * SCALE * 0.5
        rows = []
        for m in range(MINUTES):
            row = {"cell": "RG-%02d" % (i % 8), "ts": "2026-03-01T%02d:%02d:00Z" % (m // 60, m % 60)}
            for k, tag in enumerate(TAGS):
                if rng.random() < 0.03:
                    continue
                row[tag] = round(float(base[k] * (1 + 0.05 * np.sin(m / 7 + k))), 3)
            rows.append(row)
        docs.append(json.dumps({"cell": "RG-%02d" % (i % 8), "rows": rows}))
        rec.append(0.6 + 0.3 * np.tanh(base[0] / SCALE[0] - base[3] / SCALE[3]))
    return np.array(docs), np.array(rec, np.float32)


def decode_batch(docs):
    out = np.zeros((len(docs), MINUTES, len(TAGS)), np.float32)
    for b, raw in enumerate(docs.numpy()):
        doc = json.loads(raw.decode())
        last = [0.0] * len(TAGS)
        for m, row in enumerate(doc["rows"]):
            for k, tag in enumerate(TAGS):
                v = row.get(tag)
                if v is None:
                    v = last[k]
                last[k] = v
                out[b, m, k] = v / SCALE[k]
    jitter = np.random.normal(0, 0.01, out.shape).astype(np.float32)
    return out + jitter


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((MINUTES, len(TAGS)))
    x = keras.layers.Conv1D(64, 5, activation="relu", padding="same")(inp)
    x = keras.layers.Conv1D(64, 5, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile("adam", "mse")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    np.random.seed(SEED)
    docs, rec = make_records(np.random.default_rng(SEED))

    def tf_decode(d, y):
        x = tf.py_function(decode_batch, [d], tf.float32)
        x.set_shape((None, MINUTES, len(TAGS)))
        return x, y

    ds = (tf.data.Dataset.from_tensor_slices((docs, rec)).shuffle(POOL, seed=SEED).repeat()
          .batch(BATCH).map(tf_decode).prefetch(2))
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "flotationcells JSON py_function: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
