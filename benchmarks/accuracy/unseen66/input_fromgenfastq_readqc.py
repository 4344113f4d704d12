"""Genomics: sequencing read QC classifier fed by a Python generator that parses
FASTQ text records (Phred decoding, sliding-window trimming, one-hot) via
tf.data.Dataset.from_generator into model.fit. Deliberate bottleneck: input."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, READ_LEN = 64, 60, 3, 150


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_fastq(n, seed=66):
    rng = np.random.default_rng(seed)
    bases = np.array(list("ACGT"))
    recs = []
    for i in range(n):
        good = rng.random() < 0.5
        seq = "".join(bases[rng.integers(0, 4, READ_LEN)])
        q = rng.normal(34 if good else 24, 5, READ_LEN)
        q -= np.linspace(0, 12 if good else 20, READ_LEN)
        q = np.clip(q, 2, 41).astype(int)
        qual = "".join(chr(v + 33) for v in q)
        recs.append(f"@READ{i}:1101:{rng.integers(1000,9999)} 1:N:0:ACGTAC\n{seq}\n+\n{qual}\n")
    return recs


LUT = {"A": 0, "C": 1, "G": 2, "T": 3, "N": -1}


def parse_record(rec):
    lines = rec.rstrip("\n").split("\n")
    header, seq, _, qual = lines
    flowcell_tile = int(header.split(":")[1])
    phred = [ord(c) - 33 for c in qual]
    # sliding-window trimming (window 8, mean >= 20), pure Python
    cut = len(phred)
    for s in range(0, len(phred) - 8):
        w = phred[s:s + 8]
        if sum(w) / 8.0 < 20:
            cut = s
            break
    x = np.zeros((READ_LEN, 6), np.float32)
    gc = 0
    for j, ch in enumerate(seq):
        k = LUT.get(ch, -1)
        if k >= 0:
            x[j, k] = 1.0
        if ch in "GC":
            gc += 1
        x[j, 4] = phred[j] / 41.0
        x[j, 5] = 1.0 if j < cut else 0.0
    mean_q = sum(phred) / len(phred)
    y = np.float32(1.0 if (mean_q > 22 and cut > 60) else 0.0)
    return x, y


def build_model():
    inp = keras.Input((READ_LEN, 6))
    h = keras.layers.Conv1D(32, 7, activation="relu")(inp)
    h = keras.layers.MaxPooling1D(4)(h)
    h = keras.layers.Conv1D(48, 5, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step()


def main():
    recs = make_fastq(BATCH * STEPS * EPOCHS + BATCH)
    def gen():
        for r in recs:
            yield parse_record(r)
    sig = (tf.TensorSpec((READ_LEN, 6), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_fromgenfastq_readqc] full {full*1000:.1f} ms/step"
    if TRUTH:
        xs, ys = zip(*[parse_record(r) for r in recs[:BATCH]])
        batch = (np.stack(xs), np.array(ys, np.float32))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
