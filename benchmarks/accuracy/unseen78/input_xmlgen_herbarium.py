import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
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


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Herbarium digitisation: specimen sheets arrive as XML records; a Python
# generator parses each record with ElementTree and feeds model.fit through
# tf.data.Dataset.from_generator. Parsing in Python is the bottleneck.
import xml.etree.ElementTree as ET

BATCH = 64
STEPS = 170
EPOCHS = 3
N_REC = 2048
N_TRAITS = 48
FAMILIES = 12

rng = np.random.default_rng(78)
TRAIT_NAMES = [f"trait{i:02d}" for i in range(N_TRAITS)]


def make_record(i):
    fam = int(rng.integers(FAMILIES))
    vals = rng.normal(fam * 0.1, 1.0, N_TRAITS)
    parts = [f'<specimen id="H{i:06d}" family="{fam}">',
             f"<collector>Collector {i % 97}</collector>",
             f"<date>{1900 + i % 120}-{1 + i % 12:02d}-{1 + i % 28:02d}</date>",
             "<traits>"]
    for n, v in zip(TRAIT_NAMES, vals):
        parts.append(f'<m name="{n}" unit="mm">{v:.5f}</m>')
    parts.append("</traits></specimen>")
    return "".join(parts)


RECORDS = [make_record(i) for i in range(N_REC)]


def parse(xml_text):
    root = ET.fromstring(xml_text)
    fam = int(root.get("family"))
    year = int(root.find("date").text[:4])
    traits = {m.get("name"): float(m.text) for m in root.find("traits")}
    x = np.array([traits[n] for n in TRAIT_NAMES] + [(year - 1960) / 60.0], dtype=np.float32)
    x = (x - x.mean()) / (x.std() + 1e-6)
    return x, fam


def specimen_gen():
    order = np.random.default_rng(1).permutation(N_REC)
    k = 0
    while True:
        idx = order[k % N_REC]
        k += 1
        for _ in range(PARSE_PASSES):
            x, y = parse(RECORDS[idx])
        yield x, np.int32(y)


PARSE_PASSES = 1


def build():
    m = keras.Sequential([keras.Input((N_TRAITS + 1,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(FAMILIES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def full_ds():
    ds = tf.data.Dataset.from_generator(
        specimen_gen,
        output_signature=(tf.TensorSpec((N_TRAITS + 1,), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


full = run(full_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[input_xmlgen_herbarium] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_xmlgen_herbarium] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
