"""Manufacturing QA: classify machined parts from Wavefront OBJ scans. Meshes are written as .obj text files to a temp folder; a keras.utils.PyDataset parses vertex/face lines in Python and computes face-area and radius histograms per batch for model.fit."""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

def train_loop(model, opt, loss_fn, get_batch, epochs, steps):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    gaps = []
    for e in range(epochs):
        last = None
        for s in range(steps):
            x, y = get_batch(e * steps + s)
            lv = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return float(np.mean(g))

BATCH, STEPS, EPOCHS = 32, 130, 3
NFILES = 400


def write_mesh(path, r, cls):
    n = 150
    ang = r.uniform(0, 2 * np.pi, n)
    h = r.uniform(-1, 1, n)
    rad = 1.0 + 0.3 * cls * np.sin(3 * ang) + r.normal(0, 0.05, n)
    with open(path, "w") as f:
        f.write(f"# part class {cls}\no part\n")
        for a, z, rr in zip(ang, h, rad):
            f.write(f"v {rr*np.cos(a):.5f} {rr*np.sin(a):.5f} {z*(1+cls*0.2):.5f}\n")
        for _ in range(2 * n):
            a, b, c = r.integers(1, n + 1, 3)
            f.write(f"f {a}//{a} {b}//{b} {c}//{c}\n")


def parse_obj(path):
    verts, faces = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                verts.append([float(x) for x in line.split()[1:4]])
            elif line.startswith("f "):
                faces.append([int(tok.split("/")[0]) - 1 for tok in line.split()[1:4]])
    v = np.asarray(verts, np.float32)
    fa = np.asarray(faces)
    e1, e2 = v[fa[:, 1]] - v[fa[:, 0]], v[fa[:, 2]] - v[fa[:, 0]]
    area = 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)
    r = np.linalg.norm(v, axis=1)
    feat = np.concatenate([np.histogram(area, 32, (0, 2))[0] / len(area),
                           np.histogram(r, 32, (0, 2))[0] / len(r),
                           np.histogram(v[:, 2], 32, (-2, 2))[0] / len(v)])
    return feat.astype(np.float32)


class ObjMeshes(keras.utils.PyDataset):
    def __init__(self, paths, labels):
        super().__init__()
        self.paths, self.labels = paths, labels

    def __len__(self):
        return STEPS

    def __getitem__(self, i):
        idx = [(i * BATCH + k) % len(self.paths) for k in range(BATCH)]
        x = np.stack([parse_obj(self.paths[j]) for j in idx])
        return x, self.labels[idx]


def build():
    m = keras.Sequential([keras.Input((96,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(4)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(data):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    if isinstance(data, tf.data.Dataset):
        m.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        m.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u45_input_wavefront_obj_meshes_")
try:
    rng = np.random.default_rng(45)
    labels = rng.integers(0, 4, NFILES).astype(np.int32)
    paths = []
    for k in range(NFILES):
        p = os.path.join(tmp, f"part_{k:04d}.obj")
        write_mesh(p, rng, int(labels[k]))
        paths.append(p)
    seq = ObjMeshes(paths, labels)
    full = run(seq)
    emit({"steps_per_second": 1.0 / full})
    msg = f"obj full {full*1000:.1f} ms/step"
    if TRUTH:
        x, y = seq[0]
        comp = run(tf.data.Dataset.from_tensors((x, y)).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
