"""Cell-counting microscopy: a lab exports grayscale fluorescence crops as plain-text
(ASCII "P2") PGM files, one file per crop, with the count bin stored in a sidecar
label list. A Python generator reads and parses each PGM by hand (header, whitespace
separated integers), normalises and flips the crop, and feeds batches to model.fit.
"""
import os, sys, json, time, random, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
IMG = 96
N_FILES = 320
BATCH = 32
STEPS = 75
EPOCHS = 4
N_CLASSES = 5


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def render_cells(rng, n_cells):
    yy, xx = np.mgrid[0:IMG, 0:IMG]
    img = rng.normal(18, 6, (IMG, IMG))
    for _ in range(n_cells):
        cy, cx = rng.uniform(6, IMG - 6, 2)
        r = rng.uniform(2.5, 5.0)
        img += rng.uniform(120, 200) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
    return np.clip(img, 0, 255).astype(np.uint8)


def write_dataset(root):
    rng = np.random.default_rng(SEED)
    paths, labels = [], []
    for i in range(N_FILES):
        label = int(rng.integers(0, N_CLASSES))
        img = render_cells(rng, 2 + 4 * label + int(rng.integers(0, 3)))
        p = os.path.join(root, f"crop_{i:04d}.pgm")
        with open(p, "w") as f:
            f.write(f"P2\n# exported by scope-ctl\n{IMG} {IMG}\n255\n")
            for row in img:
                f.write(" ".join(str(int(v)) for v in row) + "\n")
        paths.append(p)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


def read_pgm(path):
    with open(path) as f:
        tokens = []
        for line in f:
            line = line.split("#", 1)[0]
            tokens.extend(line.split())
    assert tokens[0] == "P2"
    w, h, maxval = int(tokens[1]), int(tokens[2]), int(tokens[3])
    pix = np.array([int(t) for t in tokens[4:]], dtype=np.float32).reshape(h, w)
    return pix / maxval


def batch_generator(paths, labels, seed):
    rnd = random.Random(seed)
    idx = list(range(len(paths)))
    while True:
        rnd.shuffle(idx)
        for s in range(0, len(idx) - BATCH + 1, BATCH):
            xs, ys = [], []
            for i in idx[s:s + BATCH]:
                img = read_pgm(paths[i])
                img = (img - img.mean()) / (img.std() + 1e-6)
                if rnd.random() < 0.5:
                    img = img[:, ::-1]
                if rnd.random() < 0.5:
                    img = img[::-1, :]
                xs.append(img[..., None])
                ys.append(labels[i])
            yield np.stack(xs).astype(np.float32), np.array(ys, dtype=np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((IMG, IMG, 1))
    x = inp
    for f in (16, 32, 64):
        x = keras.layers.Conv2D(f, 3, strides=2, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(data, timer):
    model = build_model()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return hist.history


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_input_netpbm_ascii_cellcounts_")
    try:
        paths, labels = write_dataset(tmp)
        timer = StepTimer()
        hist = train(batch_generator(paths, labels, SEED), timer)
        full = timer.seconds_per_step()
        append_out({"steps_per_second": 1.0 / full})
        msg = f"netpbm cellcounts: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
        if truth:
            xb, yb = next(batch_generator(paths, labels, SEED + 1))
            ctimer = StepTimer()
            train(tf.data.Dataset.from_tensors((xb, yb)).repeat(), ctimer)
            comp = ctimer.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
