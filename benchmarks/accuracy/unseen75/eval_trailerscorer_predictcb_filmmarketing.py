"""Film marketing: tag trailer clips (action / comedy / horror / drama ...) from
per-frame audio-loudness and cut-rate envelopes. Training is a small Conv1D model
fit on in-memory tensors, but a callback scores the full held-out trailer
library at the end of every epoch with model.predict and computes per-genre
precision/recall/F1 and a ranking AUC in numpy.
Intended bottleneck: EVALUATION (on_epoch_end predict over a large set)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
SEED, BATCH, STEPS, EPOCHS = 75, 32, 20, 4
T, F, NCLS, NVAL = 128, 16, 6, 30000
EVAL_SECONDS = [0.0]


def make_clips(n, rng):
    y = rng.integers(0, NCLS, n).astype(np.int32)
    t = np.linspace(0, 1, T, dtype=np.float32)
    x = rng.normal(0, 0.3, (n, T, F)).astype(np.float32)
    x[:, :, 0] += np.sin(2 * np.pi * (1 + y[:, None]) * t[None, :])
    x[:, :, 1] += (y[:, None] / NCLS) * t[None, :]
    return x, y


class LibraryScorer(keras.callbacks.Callback):
    def __init__(self, xv, yv):
        super().__init__()
        self.xv, self.yv = xv, yv

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.xv, batch_size=512, verbose=0)
        pred = logits.argmax(1)
        f1s, aucs = [], []
        for c in range(NCLS):
            tp = np.sum((pred == c) & (self.yv == c))
            p = tp / max(np.sum(pred == c), 1)
            r = tp / max(np.sum(self.yv == c), 1)
            f1s.append(2 * p * r / max(p + r, 1e-9))
            s = logits[:, c]
            ranks = s.argsort().argsort()
            pos = self.yv == c
            aucs.append((ranks[pos].sum() - pos.sum() * (pos.sum() - 1) / 2) / max(pos.sum() * (~pos).sum(), 1))
        EVAL_SECONDS[0] += time.perf_counter() - t
        self.last = (float(np.mean(f1s)), float(np.mean(aucs)))


def make_model():
    keras.utils.set_random_seed(SEED)
    L = keras.layers
    m = keras.Sequential([keras.Input((T, F)), L.Conv1D(64, 5, activation="relu"), L.MaxPooling1D(2),
                          L.Conv1D(64, 5, activation="relu"), L.GlobalAveragePooling1D(),
                          L.Dense(64, activation="relu"), L.Dense(NCLS)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds, xv, yv):
    model, timer, scorer = make_model(), StepTimer(), LibraryScorer(xv, yv)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, scorer], verbose=0)
    return sec_per_step(timer.gaps), scorer.last


def main():
    rng = np.random.default_rng(SEED)
    x, y = make_clips(4000, rng)
    xv, yv = make_clips(NVAL, rng)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4000, seed=SEED).repeat().batch(BATCH).prefetch(2)
    full, (f1, auc) = run(ds, xv, yv)
    compute = None
    if TRUTH:
        one = next(iter(ds))
        compute, _ = run(tf.data.Dataset.from_tensors(one).repeat(), xv, yv)
    wall = time.perf_counter() - T0
    report("eval_trailerscorer_predictcb_filmmarketing", full, compute,
           f"eval={EVAL_SECONDS[0]:.1f}s eval_share={EVAL_SECONDS[0]/wall:.2f} f1={f1:.3f} auc={auc:.3f}")


if __name__ == "__main__":
    main()
