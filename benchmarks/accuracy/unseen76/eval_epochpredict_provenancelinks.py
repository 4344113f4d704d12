"""Provenance-link scoring for auction-catalogue entries (evaluation-bound).

Data path: numeric descriptors of catalogue entries (sale year, lot
dimensions, hashed artist/dealer features) are generated with numpy and fed
by tf.data.from_tensor_slices to model.fit.  A ProvenanceAudit callback runs
model.predict over a very large held-out register at every on_epoch_end and
computes top-3 accuracy and a confusion matrix in numpy.  Deliberate
bottleneck: the per-epoch predict over the register (evaluation-bound).
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


BATCH = 128
STEPS = 20
EPOCHS = 3
FEAT = 96
NCLASS = 20
HOLDOUT = 170_000


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(0).normal(0, 1, (NCLASS, FEAT)).astype(np.float32)
    y = rng.integers(0, NCLASS, n).astype(np.int32)
    x = centers[y] + 1.5 * rng.standard_normal((n, FEAT), dtype=np.float32)
    return x, y


XTR, YTR = make_data(8192, seed=76)
XHO, YHO = make_data(HOLDOUT, seed=77)


class ProvenanceAudit(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(XHO, batch_size=512, verbose=0)
        top3 = np.argsort(-logits, axis=1)[:, :3]
        acc3 = float(np.mean((top3 == YHO[:, None]).any(axis=1)))
        conf = np.zeros((NCLASS, NCLASS), np.int64)
        np.add.at(conf, (YHO, top3[:, 0]), 1)
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: register top-3 acc {acc3:.3f}, "
              f"diag {np.trace(conf)/HOLDOUT:.3f}")


def build_model():
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def make_dataset():
    return tf.data.Dataset.from_tensor_slices((XTR, YTR)).shuffle(8192, seed=1).repeat().batch(BATCH)


def run(ds):
    keras.utils.set_random_seed(76)
    model = build_model()
    timer, audit = StepTimer(), ProvenanceAudit()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
    return timer.seconds_per_step(), audit.seconds


def main():
    full, eval_s = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - WALL0
    print(f"provenancelinks: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"evaluation {eval_s:.1f}s = {100*eval_s/wall:.0f}% of wall {wall:.1f}s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        compute, eval2 = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)
        wall = time.perf_counter() - WALL0
        print(f"  evaluation total {eval_s+eval2:.1f}s = {100*(eval_s+eval2)/wall:.0f}% of wall {wall:.1f}s")


if __name__ == "__main__":
    main()
