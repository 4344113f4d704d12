import time; T0 = time.perf_counter()
"""Fold-sequence instruction text -> difficulty grade.  A keras.utils.PyDataset
(workers=1) writes and featurises each batch of origami diagram instructions in
Python (regex tokenising, word and character n-gram hashing) inside __getitem__."""
import os, sys, json, re, zlib
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

BATCH = 64
STEPS = 100
EPOCHS = 5
N_FEAT = 4096
STEPS_PER_TEXT = (5, 10)   # folding steps per instruction sheet
N_CLASSES = 3

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
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

MOVES = ["valley fold", "mountain fold", "inside reverse fold", "outside reverse fold",
         "squash fold", "petal fold", "rabbit ear", "sink fold", "crimp", "pleat",
         "swivel fold", "unfold", "turn over", "rotate"]
HARD = {"petal fold", "sink fold", "swivel fold", "crimp", "outside reverse fold"}
PARTS = ["top corner", "bottom corner", "left edge", "right edge", "the flap", "both layers",
         "the front flap", "the point", "the diagonal", "the centre crease", "the raw edges"]
TARGETS = ["to the centre line", "along the existing crease", "in half", "to the opposite corner",
           "so the edges meet", "behind", "upward", "downward", "and crease well", "and repeat behind"]
TOKEN_RE = re.compile(r"[a-z]+|\d+")

def write_instructions(rng):
    n = int(rng.integers(*STEPS_PER_TEXT))
    lines, hard = [], 0
    for i in range(n):
        move = MOVES[int(rng.integers(len(MOVES)))]
        hard += move in HARD
        lines.append(f"Step {i+1}: {move.capitalize()} {PARTS[int(rng.integers(len(PARTS)))]} "
                     f"{TARGETS[int(rng.integers(len(TARGETS)))]}. "
                     f"({int(rng.integers(1, 4))} layers, paper {int(rng.integers(10, 36))} cm)")
    grade = 0 if hard <= 1 else (1 if hard <= 3 else 2)
    return "\n".join(lines), grade

def featurise(text):
    vec = np.zeros(N_FEAT, np.float32)
    low = text.lower()
    toks = TOKEN_RE.findall(low)
    for t in toks:
        vec[zlib.crc32(t.encode()) % N_FEAT] += 1.0
    for a, b in zip(toks, toks[1:]):
        vec[zlib.crc32((a + " " + b).encode()) % N_FEAT] += 1.0
    for w in low.split():
        w = "<" + w + ">"
        for k in range(len(w) - 2):
            vec[zlib.crc32(w[k:k + 3].encode()) % N_FEAT] += 0.5
    return np.log1p(vec)

class FoldStepBatches(keras.utils.PyDataset):
    def __init__(self, n_batches, seed, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches
        self.seed = seed
    def __len__(self):
        return self.n_batches
    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        xs, ys = [], []
        for _ in range(BATCH):
            text, grade = write_instructions(rng)
            xs.append(featurise(text)); ys.append(grade)
        return np.stack(xs), np.asarray(ys, np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(384, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    print(f"  fit {time.perf_counter()-t:.1f} s, sum gaps {sum(timer.gaps):.1f} s")
    return timer.seconds_per_step(), hist.history["loss"][-1]

full_s, loss = train(FoldStepBatches(STEPS, seed=98, workers=1, use_multiprocessing=False))
emit({"steps_per_second": 1.0 / full_s})
print(f"foldsteps: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = FoldStepBatches(1, seed=7)[0]
    fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    comp_s, _ = train(fixed)
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"foldsteps truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
