"""Biology: protein fold-class classifier. tf.data map calls tf.numpy_function
that parses fixed-column PDB ATOM records (backbone N/CA atoms), builds pairwise
CA distance histograms per residue, and feeds model.fit. Bottleneck: input."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, NRES, NBINS, NCLS = 32, 50, 3, 48, 16, 3
AA = ["ALA", "GLY", "LEU", "SER", "VAL", "GLU", "LYS", "ASP", "THR", "ILE"]


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


def make_pdb_blocks(n, seed=66):
    rng = np.random.default_rng(seed)
    blocks, labels = [], []
    for i in range(n):
        cls = int(rng.integers(NCLS))
        t = np.arange(NRES, dtype=np.float64)
        if cls == 0:   # helix: 3.6 residues/turn, 1.5 A rise
            ca = np.stack([2.3 * np.cos(t * 1.745), 2.3 * np.sin(t * 1.745), 1.5 * t], 1)
        elif cls == 1:  # strand-like zig-zag
            ca = np.stack([3.3 * t, 0.9 * (t % 2), 0.3 * np.sin(t / 5)], 1)
        else:           # compact coil: random walk
            ca = np.cumsum(rng.normal(0, 2.2, (NRES, 3)), 0)
        ca += rng.normal(0, 0.4, ca.shape)
        lines, serial = [], 1
        ca = ca.tolist()
        for r in range(NRES):
            resn = AA[rng.integers(len(AA))]
            for name, off in (("N", -1.2), ("CA", 0.0)):
                x, y, z = ca[r][0] + 0.3 * off, ca[r][1] + 0.2 * off, ca[r][2] + 0.1 * off
                lines.append(f"ATOM  {serial:5d}  {name:<3s} {resn} A{r+1:4d}    "
                             f"{x:8.3f}{y:8.3f}{z:8.3f}{1.0:6.2f}{5 + 55 * rng.random():6.2f}           {name[0]}")
                serial += 1
        lines.append("TER")
        blocks.append("\n".join(lines).encode())
        labels.append(cls)
    return blocks, np.array(labels, np.int32)


EDGES = np.linspace(0, 40, NBINS + 1)


def parse_pdb(block):
    ca, bfac = [], []
    for line in block.decode().split("\n"):
        if not line.startswith("ATOM"):
            continue
        name = line[12:16].strip()
        if name != "CA":
            continue
        ca.append((float(line[30:38]), float(line[38:46]), float(line[46:54])))
        bfac.append(float(line[60:66]))
    ca = np.array(ca, np.float64)
    d = np.sqrt(((ca[:, None, :] - ca[None, :, :]) ** 2).sum(-1))
    bins = np.clip(np.digitize(d, EDGES) - 1, 0, NBINS - 1)
    hist = np.zeros((NRES, NBINS), np.float32)
    np.add.at(hist, (np.repeat(np.arange(NRES), NRES), bins.ravel()), 1.0)
    feats = np.concatenate([hist / NRES, np.array(bfac, np.float32)[:, None] / 60.0], 1)
    return feats


def build_model():
    inp = keras.Input((NRES, NBINS + 1))
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(NCLS, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step()


def main():
    blocks, labels = make_pdb_blocks(BATCH * STEPS)
    def tf_parse(b, y):
        x = tf.numpy_function(parse_pdb, [b], tf.float32)
        x.set_shape((NRES, NBINS + 1))
        return x, y
    ds = (tf.data.Dataset.from_tensor_slices((blocks, labels)).repeat()
          .map(tf_parse, num_parallel_calls=2).batch(BATCH).prefetch(2))
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_numpyfnpdb_foldclass] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = (np.stack([parse_pdb(b) for b in blocks[:BATCH]]), labels[:BATCH])
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
