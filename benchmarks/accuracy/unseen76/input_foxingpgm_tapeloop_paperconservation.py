"""Foxing detection on digitised paper documents (custom GradientTape loop).

Data path: grayscale page crops are stored as binary PGM ("P5") blobs.  A
plain Python loop builds every batch: parse the PGM header, np.frombuffer
the pixels, paint synthetic foxing spots (random discs) as augmentation,
flat-field normalise, and build the target foxing mask (max-pooled to 12x12 cells).  The batch is
handed to a tf.function train step; the loss is fetched as a Python float.
Deliberate bottleneck: Python-side decoding and spot synthesis per image
(input-bound).
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


BATCH = 24
STEPS = 40
EPOCHS = 3
SIZE = 48


def make_pages(n, seed):
    rng = np.random.default_rng(seed)
    blobs = []
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    for i in range(n):
        page = 200 + 20 * np.sin(xx / rng.uniform(6, 20)) + rng.normal(0, 6, (SIZE, SIZE))
        for _ in range(int(rng.integers(4, 9))):  # text lines
            y = int(rng.integers(4, SIZE - 4))
            page[y:y + 2, 4:SIZE - 4] -= 120
        pix = np.clip(page, 0, 255).astype(np.uint8)
        blobs.append(b"P5\n# archive folio %d\n%d %d\n255\n" % (i, SIZE, SIZE) + pix.tobytes())
    return blobs


def decode_pgm(blob):
    lines = []
    pos = 0
    while len(lines) < 3:
        end = blob.index(b"\n", pos)
        line = blob[pos:end]
        pos = end + 1
        if not line.startswith(b"#"):
            lines.append(line)
    w, h = map(int, lines[1].split())
    return np.frombuffer(blob, np.uint8, count=w * h, offset=pos).reshape(h, w).astype(np.float32)


def add_foxing(img, rng):
    mask = np.zeros_like(img)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    for _ in range(int(rng.integers(4, 14))):
        cy, cx = rng.uniform(0, SIZE, 2)
        r = rng.uniform(1.5, 5.0)
        d = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
        spot = np.clip(1.0 - d / r, 0, 1)
        img = img - spot * rng.uniform(40, 90)
        mask = np.maximum(mask, (spot > 0.2).astype(np.float32))
    return img, mask


def flat_field(img):
    col = img.mean(axis=0, keepdims=True)
    row = img.mean(axis=1, keepdims=True)
    return (img - 0.5 * (col + row) + 128.0) / 255.0


PAGES = make_pages(400, seed=76)


def python_batches(rng):
    while True:
        xs, ys = [], []
        for i in rng.integers(0, len(PAGES), BATCH):
            img = decode_pgm(PAGES[i])
            img, mask = add_foxing(img, rng)
            if rng.random() < 0.5:
                img, mask = img[:, ::-1], mask[:, ::-1]
            xs.append(flat_field(img)[..., None])
            cells = mask.reshape(SIZE // 4, 4, SIZE // 4, 4).max(axis=(1, 3))
            ys.append(cells[..., None])
        yield np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


def build_model():
    inp = keras.Input((SIZE, SIZE, 1))
    # coarse foxing map at 1/4 resolution (12x12 cells)
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    out = keras.layers.Conv2D(1, 1)(x)
    return keras.Model(inp, out)


def run(batch_source):
    keras.utils.set_random_seed(76)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = next(batch_source)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


def repeat_one(batch):
    while True:
        yield batch


def main():
    full, loss = run(python_batches(np.random.default_rng(5)))
    emit({"steps_per_second": 1.0 / full})
    print(f"paperconservation: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        batch = next(python_batches(np.random.default_rng(5)))
        compute, _ = run(repeat_one(batch))
        report_truth(full, compute)


if __name__ == "__main__":
    main()
