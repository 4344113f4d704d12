"""Nanopore read QC classifier: predicts whether a raw read carries an adapter-chimera
signature from its bases and per-base Phred qualities. The script writes a FASTQ file,
indexes record byte offsets, and a keras.utils.PyDataset seeks, parses and one-hot encodes
every read (bases plus decoded qualities) in Python for each batch fed to model.fit."""
import time
T0 = time.perf_counter()
import json, os, random, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, READ_LEN, BATCH, STEPS, EPOCHS = 48, 256, 96, 180, 3
BASE_IDX = {"A": 0, "C": 1, "G": 2, "T": 3, "N": 4}


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_fastq(path, n_reads):
    rng = random.Random(SEED)
    adapter = "AATGTACTTCGTTCAGTTACGTATTGCT"
    with open(path, "w") as f:
        for i in range(n_reads):
            seq = [rng.choice("ACGT") for _ in range(READ_LEN)]
            chimera = i % 2
            if chimera:
                pos = rng.randrange(40, READ_LEN - 60)
                seq[pos:pos + len(adapter)] = list(adapter)
            qual = "".join(chr(33 + max(2, min(40, int(rng.gauss(22 - 6 * chimera, 6))))) for _ in range(READ_LEN))
            f.write(f"@read_{i:06d} runid=u48 ch={rng.randint(1, 512)} chimera={chimera}\n")
            f.write("".join(seq) + "\n+\n" + qual + "\n")


def index_fastq(path):
    offsets = []
    with open(path, "rb") as f:
        pos = 0
        for i, line in enumerate(f):
            if i % 4 == 0:
                offsets.append(pos)
            pos += len(line)
    return offsets


class FastqBatches(keras.utils.PyDataset):
    def __init__(self, path, offsets, **kw):
        super().__init__(**kw)
        self.path, self.offsets = path, offsets
        self.order = np.random.default_rng(SEED).permutation(len(offsets))
    def __len__(self):
        return STEPS
    def __getitem__(self, idx):
        x = np.zeros((BATCH, READ_LEN, 7), np.float32)
        y = np.zeros((BATCH, 1), np.float32)
        with open(self.path, "r") as f:
            for j in range(BATCH):
                f.seek(self.offsets[self.order[(idx * BATCH + j) % len(self.order)]])
                header = f.readline().strip()
                seq = f.readline().strip()
                f.readline()
                qual = f.readline().strip()
                fields = dict(kv.split("=") for kv in header.split()[1:])
                y[j, 0] = float(fields["chimera"])
                for k, (b, q) in enumerate(zip(seq, qual)):
                    x[j, k, BASE_IDX[b]] = 1.0
                    phred = ord(q) - 33
                    x[j, k, 5] = phred / 40.0
                    x[j, k, 6] = 1.0 - 10 ** (-phred / 10.0)
        return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((READ_LEN, 7)),
        keras.layers.Conv1D(32, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(32, 7, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_fastq_pydataset_nanopore_")
    try:
        path = os.path.join(tmp, "reads.fastq")
        write_fastq(path, 3000)
        offsets = index_fastq(path)
        data = FastqBatches(path, offsets)
        model = build_model()
        timer = StepTimer()
        hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        main_wall = time.perf_counter() - T0
        msg = f"fastq nanopore: loss={hist.history['loss'][-1]:.4f} step={full*1000:.1f}ms main_wall={main_wall:.1f}s"
        if truth:
            batch = data[0]
            m2 = build_model()
            t2 = StepTimer()
            ds = tf.data.Dataset.from_tensors(batch).repeat()
            m2.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
