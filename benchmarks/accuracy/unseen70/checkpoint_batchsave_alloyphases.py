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

# ---- checkpoint_batchsave_alloyphases: a phase classifier for high-entropy alloy
# compositions; a custom callback writes a full .keras model archive every few
# batches (a "never lose progress" policy) into a temp directory.
BATCH = 8
STEPS = 60
EPOCHS = 3
SAVE_EVERY = 1
ELEMENTS = 24
PHASES = ["FCC", "BCC", "FCC+BCC", "HCP", "intermetallic"]


def make_alloys(n, seed=70):
    rng = np.random.default_rng(seed)
    comp = rng.dirichlet(np.full(ELEMENTS, 0.4), n).astype(np.float32)
    vec = comp @ rng.uniform(3, 11, ELEMENTS)
    radius = comp @ rng.uniform(1.2, 1.6, ELEMENTS)
    x = np.column_stack([comp, vec[:, None] / 11, radius[:, None] / 1.6]).astype(np.float32)
    y = np.digitize(vec, [5.5, 6.9, 8.0, 9.0]).astype(np.int32)
    return x, y


class SaveAndTime(keras.callbacks.Callback):
    """Stamps the step end, then saves, then restarts the clock after the save."""

    def __init__(self, folder, tag):
        super().__init__()
        self.folder, self.tag = folder, tag
        self.gaps, self.last, self.save_s, self.n = [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if batch % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(os.path.join(self.folder, f"{self.tag}_latest.keras"))
            self.save_s += time.perf_counter() - t
            self.n += 1
            self.last = time.perf_counter()


def make_model():
    m = keras.Sequential([keras.Input((ELEMENTS + 2,))] +
                         [keras.layers.Dense(768, activation="relu") for _ in range(4)] +
                         [keras.layers.Dense(len(PHASES))])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


X, Y = make_alloys(BATCH * STEPS)


def run(ds, folder, tag):
    keras.utils.set_random_seed(70)
    model = make_model()
    cb = SaveAndTime(folder, tag)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb.save_s, cb.n


def main():
    folder = tempfile.mkdtemp(prefix="u70_checkpoint_batchsave_alloyphases_")
    try:
        full, sv, n = run(tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(BATCH), folder, "full")
        sps = 1.0 / full
        emit({"steps_per_second": sps})
        wall = time.perf_counter() - T0
        print(f"[checkpoint_batchsave_alloyphases] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, {n} saves {sv:.1f}s = {100*sv/wall:.0f}% of wall {wall:.1f}s")
        if TRUTH:
            comp, sv2, n2 = run(tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat(), folder, "truth")
            frac = truth_fraction(full, comp)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - T0
            print(f"[checkpoint_batchsave_alloyphases] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}, saves {sv+sv2:.1f}s = {100*(sv+sv2)/wall:.0f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
