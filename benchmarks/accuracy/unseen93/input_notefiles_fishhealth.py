import time; T0 = time.perf_counter()
"""Fish health inspection notes: every vet/technician inspection is saved as
its own tiny text file (one note per file, hundreds of files). tf.data lists
the files, reads them with TextLineDataset and parses each record with string
ops (field split, numeric scores, regex clean-up, hashed bag of words) before
model.fit predicts whether the pen needs treatment."""
import os, sys, json, random, shutil, tempfile
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
        return sum(g) / len(g)

N_FILES = 1200
PER_FILE = 3          # morning / midday / evening round
BATCH = 32
EPOCHS = 14
STEPS = N_FILES * PER_FILE // BATCH
VOCAB = 2048
WORDS = ("gill pale erosion fin snout lesion lice chalimus preadult adult gravid "
         "amoeba AGD score cataract winter ulcer scale loss haemorrhage moribund "
         "lethargic flashing jumping appetite reduced normal good poor cleaner wrasse "
         "lumpfish thermolicer hydrolicer freshwater bath peroxide treatment advised").split()
SITES = ["Kvaroy", "Hitra", "Froya", "Smola", "Austevoll", "Lingalaks"]

def write_notes(root):
    rng = random.Random(93)
    for i in range(N_FILES):
      lines = []
      for _ in range(PER_FILE):
        gill = rng.randint(0, 5); lice = round(rng.expovariate(2.0), 2)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 120)))
        treat = int(gill >= 3 or lice > 0.5)
        lines.append(f"2025-{rng.randint(1,12):02d}-{rng.randint(1,28):02d}|site={rng.choice(SITES)}"
                f"|pen={rng.randint(1,14):02d}|inspector=INS{rng.randint(100,999)}"
                f"|gill_score={gill}|lice_adult_f={lice}|mort_per_day={rng.randint(0,40)}"
                f"|temp_c={rng.uniform(4,16):.1f}|treat={treat}|notes={words}; ")
      with open(os.path.join(root, f"insp_{i:05d}.txt"), "w") as f:
          f.write("\n".join(lines) + "\n")

def parse_line(line):
    parts = tf.strings.split(line, "|")
    kv = tf.strings.split(parts[1:9], "=")
    vals = kv.flat_values[1::2]
    gill = tf.strings.to_number(vals[3])
    lice = tf.strings.to_number(vals[4])
    mort = tf.strings.to_number(vals[5])
    temp = tf.strings.to_number(vals[6])
    label = tf.strings.to_number(vals[7])
    notes = tf.strings.substr(parts[9], 6, -1)
    notes = tf.strings.lower(notes)
    notes = tf.strings.regex_replace(notes, r"[^a-z ]", " ")
    notes = tf.strings.regex_replace(notes, r"\s+", " ")
    toks = tf.strings.split(notes, " ")
    bigr = tf.strings.ngrams(toks, 2, separator="_")
    trig = tf.strings.ngrams(toks, 3, separator="_")
    ids = tf.concat([tf.strings.to_hash_bucket_fast(toks, VOCAB),
                     tf.strings.to_hash_bucket_fast(bigr, VOCAB),
                     tf.strings.to_hash_bucket_fast(trig, VOCAB)], 0)
    bow = tf.math.bincount(tf.cast(ids, tf.int32), minlength=VOCAB, maxlength=VOCAB,
                           dtype=tf.float32)
    bow = bow / (tf.reduce_sum(bow) + 1.0)
    num = tf.stack([gill / 5.0, lice, mort / 40.0, temp / 16.0])
    return tf.concat([num, bow], 0), label

def make_ds(root):
    files = tf.data.Dataset.list_files(os.path.join(root, "insp_*.txt"), shuffle=True, seed=93)
    return (files.flat_map(tf.data.TextLineDataset)
            .map(parse_line).batch(BATCH, drop_remainder=True).repeat().prefetch(1))

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((VOCAB + 4,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m

def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()

root = tempfile.mkdtemp(prefix="u93_input_notefiles_fishhealth_")
try:
    write_notes(root)
    full = run(make_ds(root))
    emit({"steps_per_second": 1.0 / full})
    print(f"[fishhealth] tiny-files TextLineDataset fit: {full*1000:.2f} ms/step, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_ds(root)))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[fishhealth] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
finally:
    shutil.rmtree(root, ignore_errors=True)
