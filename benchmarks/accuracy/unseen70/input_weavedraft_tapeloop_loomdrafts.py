import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


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

# ---- input_weavedraft_tapeloop_loomdrafts: handloom weave drafts (threading,
# treadling, tie-up, yarn colours) are parsed from WIF-like text and rendered into
# drawdown images with nested Python loops, then fed batch by batch to a custom
# tf.GradientTape training loop.
BATCH = 16
STEPS = 200
SIZE = 32
CLASSES = ["plain", "twill", "satin", "basket", "herringbone", "rib"]
PALETTE = {"ecru": (0.93, 0.90, 0.82), "indigo": (0.18, 0.2, 0.45), "madder": (0.65, 0.15, 0.12),
           "weld": (0.85, 0.8, 0.25), "black": (0.08, 0.08, 0.08), "sage": (0.55, 0.62, 0.48)}


def make_draft(rng, cls):
    shafts = 4 if cls in (1, 4, 5) else (5 if cls == 2 else 2 + 2 * (cls == 3))
    if cls == 4:
        thr = [(i % shafts) if (i // 8) % 2 == 0 else (shafts - 1 - i % shafts) for i in range(SIZE)]
    else:
        thr = [i % shafts for i in range(SIZE)]
    trd = [i % shafts for i in range(SIZE)]
    tie = []
    for t in range(shafts):
        if cls == 0 or cls == 3:
            tie.append([s for s in range(shafts) if (s + t) % 2 == 0])
        elif cls == 2:
            tie.append([(t * 2) % shafts])
        elif cls == 5:
            tie.append([s for s in range(shafts) if s % 2 == t % 2 and s < 2])
        else:
            tie.append([t % shafts, (t + 1) % shafts])
    cols = list(PALETTE)
    warp = [cols[int(rng.integers(0, len(cols)))] for _ in range(3)]
    weft = [cols[int(rng.integers(0, len(cols)))] for _ in range(2)]
    lines = ["[WEAVING]", f"Shafts={shafts}", f"Treadles={shafts}", "[THREADING]"]
    lines += [f"{i+1}={s+1}" for i, s in enumerate(thr)]
    lines += ["[TREADLING]"] + [f"{i+1}={t+1}" for i, t in enumerate(trd)]
    lines += ["[TIEUP]"] + [f"{t+1}=" + ",".join(str(s + 1) for s in ss) for t, ss in enumerate(tie)]
    lines += ["[WARP COLORS]"] + [f"{i+1}={warp[i % 3]}" for i in range(SIZE)]
    lines += ["[WEFT COLORS]"] + [f"{i+1}={weft[i % 2]}" for i in range(SIZE)]
    return "\n".join(lines)


def parse_and_render(text, rng):
    section, data = None, {}
    for ln in text.split("\n"):
        if ln.startswith("["):
            section = ln.strip("[]"); data[section] = {}
        else:
            k, _, v = ln.partition("=")
            data[section][k] = v
    thr = [int(data["THREADING"][str(i + 1)]) - 1 for i in range(SIZE)]
    trd = [int(data["TREADLING"][str(i + 1)]) - 1 for i in range(SIZE)]
    tie = {int(k) - 1: {int(s) - 1 for s in v.split(",") if s} for k, v in data["TIEUP"].items()}
    warp = [PALETTE[data["WARP COLORS"][str(i + 1)]] for i in range(SIZE)]
    weft = [PALETTE[data["WEFT COLORS"][str(i + 1)]] for i in range(SIZE)]
    img = np.empty((SIZE, SIZE, 3), np.float32)
    shift = int(rng.integers(0, SIZE))
    for r in range(SIZE):
        lifted = tie[trd[(r + shift) % SIZE]]
        for c in range(SIZE):
            up = thr[c] in lifted
            rgb = warp[c] if up else weft[r]
            shade = 1.0 - 0.15 * ((r + c) % 2)  # yarn crimp shading
            img[r, c, 0] = rgb[0] * shade
            img[r, c, 1] = rgb[1] * shade
            img[r, c, 2] = rgb[2] * shade
    return img


def make_model():
    m = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(len(CLASSES)),
    ])
    return m


DRAFT_RNG = np.random.default_rng(70)
DRAFTS = [(make_draft(DRAFT_RNG, c % len(CLASSES)), c % len(CLASSES)) for c in range(300)]


def python_batches(rng):
    while True:
        idx = rng.integers(0, len(DRAFTS), BATCH)
        imgs = np.stack([parse_and_render(DRAFTS[int(i)][0], rng) for i in idx])
        labels = np.array([DRAFTS[int(i)][1] for i in idx], np.int32)
        yield imgs, labels


def train(batches):
    keras.utils.set_random_seed(70)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for _ in range(STEPS):
        x, y = next(batches)
        loss = float(step(tf.constant(x), tf.constant(y)))
        stamps.append(time.perf_counter())
    return sec_per_step(list(np.diff(stamps))), loss


def main():
    full, loss = train(python_batches(np.random.default_rng(1)))
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[input_weavedraft_tapeloop_loomdrafts] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, loss {loss:.3f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        x, y = next(python_batches(np.random.default_rng(1)))

        def same():
            while True:
                yield x, y
        comp, _ = train(same())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_weavedraft_tapeloop_loomdrafts] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
