import time; T0 = time.perf_counter()
"""Flat-pack assembly instruction step classifier.

Every assembly step of every flat-pack product (wardrobes, bookcases, bed
frames) lives in its own tiny UTF-8 text file, as exported by the instruction
authoring tool.  tf.data lists the files, reads each one with tf.io.read_file and
parses it record by record (normalise, strip part codes, tokenise, word and
bigram hashing, pad) in a serial map, then model.fit learns the step type
(panel, fitting, hinge, drawer runner, wall anchor, finishing).
Bottleneck: opening thousands of tiny files plus heavy per-record string
parsing (input-bound).
"""
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

N_FILES = 3000
BATCH = 96
STEPS = 260
EPOCHS = 3
MAXLEN = 48
BUCKETS = 5000
CLASSES = 6

PRODUCTS = ["HEMNES wardrobe", "BILLY bookcase", "MALM bed frame", "KALLAX shelf", "PAX corner unit", "ALEX drawer"]
TEMPLATES = [
    "Step {n}: Attach panel {a} to side panel {b} using {k} x cam-lock fittings (part {p}).",
    "Step {n}: Insert {k} wooden dowels (part {p}) into the pre-drilled holes of panel {a}; tap gently.",
    "Step {n}: Screw hinge {p} to door {a} with {k} x 3.5x15 mm screws, then clip onto mounting plate {b}.",
    "Step {n}: Slide drawer runner {p} into rail {a}; secure with {k} euro screws and check alignment with {b}.",
    "Step {n}: WARNING - anchor unit to the wall with bracket {p} and {k} wall plugs. Furniture tip-over can injure.",
    "Step {n}: Press {k} self-adhesive felt pads (part {p}) under base {a} and wipe surface {b} with a dry cloth.",
]


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


def write_instruction_files(root, seed=86):
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(N_FILES):
        c = int(rng.integers(CLASSES))
        text = TEMPLATES[c].format(n=int(rng.integers(1, 40)), a="ABCDEFGH"[rng.integers(8)],
                                   b="ABCDEFGH"[rng.integers(8)], k=int(rng.integers(2, 12)),
                                   p=f"{int(rng.integers(100000, 999999))}")
        text = f"# {PRODUCTS[int(rng.integers(len(PRODUCTS)))]} / sheet {i // 30}\n{text}\nlabel={c}\n"
        path = os.path.join(root, f"step_{i:05d}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append(path)
    return paths


def parse_step(path):
    raw = tf.io.read_file(path)
    lines = tf.strings.split(raw, "\n")
    body = lines[1]
    label = tf.strings.to_number(tf.strings.substr(lines[2], 6, 2), tf.int32)
    t = tf.strings.lower(body)
    t = tf.strings.regex_replace(t, r"step \d+:", " ")
    t = tf.strings.regex_replace(t, r"\d+(\.\d+)?x\d+ ?mm", " <screwsize> ")
    t = tf.strings.regex_replace(t, r"part \d{6}|\b\d{6}\b", " <partno> ")
    t = tf.strings.regex_replace(t, r"\b\d+\b", " <num> ")
    t = tf.strings.regex_replace(t, r"[^a-z<> ]", " ")
    t = tf.strings.regex_replace(t, r"\s+", " ")
    words = tf.strings.split(tf.strings.strip(t))
    bigrams = tf.strings.ngrams(words, 2, separator="_")
    trigrams = tf.strings.ngrams(words, 3, separator="_")
    toks = tf.concat([words, bigrams, trigrams], 0)
    ids = tf.strings.to_hash_bucket_fast(toks, BUCKETS - 1) + 1
    ids = ids[:MAXLEN]
    ids = tf.pad(ids, [[0, MAXLEN - tf.shape(ids)[0]]])
    ids.set_shape((MAXLEN,))
    return ids, label


def make_dataset(paths):
    ds = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=86).repeat()
    return ds.map(parse_step).batch(BATCH)


def build_model():
    inp = keras.Input((MAXLEN,), dtype="int64")
    x = keras.layers.Embedding(BUCKETS, 32)(inp)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    root = tempfile.mkdtemp(prefix="u86_input_microfiles_flatpackinstructions_")
    try:
        paths = write_instruction_files(root)
        full = train(make_dataset(paths))
        emit({"steps_per_second": 1.0 / full})
        msg = f"[flatpack] full {full*1000:.1f} ms/step"
        if TRUTH:
            batch = next(iter(make_dataset(paths)))
            fixed = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(fixed)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
        print(msg + f" wall {time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
