"""Panel-painting craquelure severity classifier.

Data path: raking-light scan tiles are stored as raw uint8 byte strings
(with a small text header).  A keras.utils.PyDataset decodes each tile
(header parse + np.frombuffer), then does Python/numpy augmentation per
image: random crop, flips, gamma, and a multi-scale crack-enhancing local-contrast
filter built from shifted differences.  Batches go straight to model.fit.
Deliberate bottleneck: per-image Python decoding/augmentation in
__getitem__ (input-bound).
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


BATCH = 32
STEPS = 40
EPOCHS = 3
SRC = 60
CROP = 48
NCLASS = 4


def make_tiles(n, seed):
    rng = np.random.default_rng(seed)
    tiles, labels = [], []
    yy, xx = np.mgrid[0:SRC, 0:SRC]
    for i in range(n):
        cls = int(rng.integers(NCLASS))
        img = rng.normal(150, 12, (SRC, SRC, 3))
        for _ in range(3 + 6 * cls):  # more cracks for higher severity
            a, b = rng.uniform(-1, 1, 2)
            c = rng.uniform(-SRC, SRC)
            mask = np.abs(a * xx + b * yy + c) < 0.8
            img[mask] -= 70
        raw = np.clip(img, 0, 255).astype(np.uint8).tobytes()
        header = f"TILE panel={i % 17} h={SRC} w={SRC} c=3 light=raking\n".encode()
        tiles.append(header + raw)
        labels.append(cls)
    return tiles, np.array(labels, np.int32)


def decode_tile(blob):
    nl = blob.index(b"\n")
    fields = dict(kv.split("=") for kv in blob[:nl].decode().split()[1:])
    h, w, c = int(fields["h"]), int(fields["w"]), int(fields["c"])
    return np.frombuffer(blob[nl + 1:], np.uint8).reshape(h, w, c)


def augment(img, rng):
    y0, x0 = rng.integers(0, SRC - CROP + 1, 2)
    im = img[y0:y0 + CROP, x0:x0 + CROP].astype(np.float32) / 255.0
    if rng.random() < 0.5:
        im = im[:, ::-1]
    if rng.random() < 0.5:
        im = im[::-1]
    im = im ** rng.uniform(0.8, 1.25)
    gray = im.mean(axis=2)
    # multi-scale crack enhancement: local contrast against 3x3..7x7 box means
    enh = np.zeros_like(gray)
    for k in (3, 5, 7):
        r = k // 2
        pad = np.pad(gray, r, mode="reflect")
        box = np.zeros_like(gray)
        for dy in range(k):
            for dx in range(k):
                box += pad[dy:dy + CROP, dx:dx + CROP]
        box /= float(k * k)
        enh = np.maximum(enh, np.clip((box - gray) * 4.0, 0, 1))
    return np.concatenate([im, enh[..., None]], axis=2)


class TileSequence(keras.utils.PyDataset):
    def __init__(self, tiles, labels, **kw):
        super().__init__(**kw)
        self.tiles, self.labels = tiles, labels
        self.rng = np.random.default_rng(3)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        pick = self.rng.integers(0, len(self.tiles), BATCH)
        x = np.stack([augment(decode_tile(self.tiles[i]), self.rng) for i in pick])
        return x.astype(np.float32), self.labels[pick]


def build_model():
    inp = keras.Input((CROP, CROP, 4))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


TILES, LABELS = make_tiles(300, seed=76)


def run(data, **fit_kw):
    keras.utils.set_random_seed(76)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **fit_kw)
    return timer.seconds_per_step()


def main():
    full = run(TileSequence(TILES, LABELS))
    emit({"steps_per_second": 1.0 / full})
    print(f"panelpaintings: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = TileSequence(TILES, LABELS)[0]
        ds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute = run(ds, steps_per_epoch=STEPS)
        report_truth(full, compute)


if __name__ == "__main__":
    main()
