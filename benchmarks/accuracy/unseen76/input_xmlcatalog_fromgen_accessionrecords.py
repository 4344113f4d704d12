"""Museum accession records -> object-category classifier.

Data path: XML catalogue records (one string per object, with dimensions,
materials and a dozen free-text condition notes) are parsed with
xml.etree.ElementTree inside a Python generator, tokens are hashed into a
bag-of-words vector, and the generator feeds model.fit through
tf.data.Dataset.from_generator.  Deliberate bottleneck: Python-side XML
parsing and token hashing (input-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


import zlib
import xml.etree.ElementTree as ET

BATCH = 64
STEPS = 60
EPOCHS = 3
VOCAB = 2048
NCLASS = 12
NOTES = 10
WORDS_PER_NOTE = 18
MATERIALS = ["oil", "tempera", "gesso", "linen", "oak", "bronze", "silver", "paper",
             "vellum", "ink", "graphite", "silk", "wool", "glass", "ceramic", "ivory"]
VOCAB_WORDS = [w + str(i) for i, w in enumerate(
    ["flaking", "abrasion", "foxing", "tide", "lining", "varnish", "bloom", "cupping",
     "tear", "loss", "inpaint", "retouch", "crack", "stain", "mould", "corrosion"] * 40)]


def make_records(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        cls = int(rng.integers(NCLASS))
        base = cls * 40
        notes = []
        for _ in range(NOTES):
            idx = (base + rng.integers(0, 160, WORDS_PER_NOTE)) % len(VOCAB_WORDS)
            year = 1900 + int(rng.integers(0, 125))
            notes.append(f"<note date='{year}-0{1 + int(rng.integers(0, 9))}-1{int(rng.integers(0, 9))}' "
                         f"by='cons{int(rng.integers(0, 30))}'>"
                         + " ".join(VOCAB_WORDS[j] for j in idx) + "</note>")
        mats = "".join(f"<material>{MATERIALS[(cls + k) % len(MATERIALS)]}</material>"
                       for k in range(1 + int(rng.integers(0, 3))))
        out.append(
            f"<record accession='1987.{i}'><category code='{cls}'/>"
            f"<dimensions h='{rng.uniform(5, 300):.1f}' w='{rng.uniform(5, 300):.1f}' "
            f"d='{rng.uniform(0.1, 80):.1f}' unit='cm'/><materials>{mats}</materials>"
            f"<conditionNotes>{''.join(notes)}</conditionNotes></record>")
    return out


def parse_record(xml_text):
    root = ET.fromstring(xml_text)
    feat = np.zeros(VOCAB + 3 + len(MATERIALS), np.float32)
    for note in root.iter("note"):
        for tok in note.text.split():
            feat[zlib.crc32(tok.encode()) % VOCAB] += 1.0
        year = int(note.get("date")[:4])
        feat[VOCAB] += (year - 1900) / 125.0 / NOTES
    dims = root.find("dimensions")
    feat[VOCAB + 1] = np.log1p(float(dims.get("h")) * float(dims.get("w"))) / 12.0
    feat[VOCAB + 2] = float(dims.get("d")) / 80.0
    for m in root.iter("material"):
        feat[VOCAB + 3 + MATERIALS.index(m.text)] = 1.0
    feat[:VOCAB] = np.log1p(feat[:VOCAB])
    label = int(root.find("category").get("code"))
    return feat, label


RECORDS = make_records(1200, seed=76)
FEAT_DIM = VOCAB + 3 + len(MATERIALS)


def record_generator():
    rng = np.random.default_rng(1)
    while True:
        for i in rng.permutation(len(RECORDS)):
            yield parse_record(RECORDS[i])


def build_model():
    inp = keras.Input((FEAT_DIM,))
    x = keras.layers.Dense(384, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        record_generator,
        output_signature=(tf.TensorSpec((FEAT_DIM,), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


def run(ds):
    keras.utils.set_random_seed(76)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"accessionrecords: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)


if __name__ == "__main__":
    main()
