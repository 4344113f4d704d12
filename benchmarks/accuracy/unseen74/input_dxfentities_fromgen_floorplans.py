"""Floor-plan room-count classifier fed by a Python generator that parses DXF-style
LINE entities (group-code text) and rasterises walls, wrapped in tf.data.Dataset.from_generator."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

GRID = 32
BATCH = 32
STEPS = 30
EPOCHS = 3
N_PLANS = 600


def make_dxf_corpus(n, seed=7):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        rooms = int(rng.integers(1, 6))
        parts = ["0\nSECTION\n2\nENTITIES\n"]
        cuts = np.sort(rng.uniform(2.0, 18.0, size=rooms - 1)) if rooms > 1 else np.array([])
        walls = [(0, 0, 20, 0), (20, 0, 20, 14), (20, 14, 0, 14), (0, 14, 0, 0)]
        for c in cuts:
            walls.append((c, 0, c, 14))
        for _ in range(int(rng.integers(6, 14))):  # furniture / hatch clutter on other layers
            x, y = rng.uniform(0, 20), rng.uniform(0, 14)
            walls.append((x, y, x + rng.uniform(-2, 2), y + rng.uniform(-2, 2)))
        for i, (x1, y1, x2, y2) in enumerate(walls):
            layer = "A-WALL" if i < 4 + len(cuts) else "A-FURN"
            parts.append(
                f"0\nLINE\n8\n{layer}\n10\n{x1:.4f}\n20\n{y1:.4f}\n30\n0.0\n"
                f"11\n{x2:.4f}\n21\n{y2:.4f}\n31\n0.0\n"
            )
        parts.append("0\nENDSEC\n0\nEOF\n")
        texts.append("".join(parts))
        labels.append(rooms - 1)
    return texts, np.array(labels, np.int32)


def parse_and_rasterise(text, rng):
    lines = text.split("\n")
    grid = np.zeros((GRID, GRID, 2), np.float32)
    i = 0
    ent = None
    while i < len(lines) - 1:
        code, val = lines[i].strip(), lines[i + 1].strip()
        i += 2
        if code == "0":
            if ent is not None and len(ent) >= 5:
                ch = 0 if ent["8"] == "A-WALL" else 1
                x1, y1, x2, y2 = (float(ent[k]) for k in ("10", "20", "11", "21"))
                n = max(2, int(np.hypot(x2 - x1, y2 - y1) * 3))
                xs = np.clip((np.linspace(x1, x2, n) / 20.0 * (GRID - 1)).astype(int), 0, GRID - 1)
                ys = np.clip((np.linspace(y1, y2, n) / 14.0 * (GRID - 1)).astype(int), 0, GRID - 1)
                grid[ys, xs, ch] = 1.0
            ent = {} if val == "LINE" else None
        elif ent is not None:
            ent[code] = val
    if rng.random() < 0.5:
        grid = grid[:, ::-1]
    if rng.random() < 0.5:
        grid = grid[::-1, :]
    grid = grid + rng.normal(0, 0.02, grid.shape).astype(np.float32)
    return np.ascontiguousarray(grid)


def build_model():
    inp = keras.Input((GRID, GRID, 2))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(5)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_dxfentities_fromgen_floorplans_")
    try:
        texts, labels = make_dxf_corpus(N_PLANS)

        def gen():
            rng = np.random.default_rng(11)
            while True:
                for j in rng.permutation(len(texts)):
                    yield parse_and_rasterise(texts[j], rng), labels[j]

        ds = tf.data.Dataset.from_generator(
            gen,
            output_signature=(tf.TensorSpec((GRID, GRID, 2), tf.float32), tf.TensorSpec((), tf.int32)),
        ).batch(BATCH).prefetch(2)

        tf.random.set_seed(0)
        timer = StepTimer()
        model = build_model()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_dxfentities_fromgen_floorplans] full {full*1000:.1f} ms/step "
              f"({1.0/full:.2f} steps/s) over {len(timer.gaps)} gaps, wall {time.perf_counter()-WALL0:.1f}s")

        if TRUTH:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2 = StepTimer()
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_dxfentities_fromgen_floorplans] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
