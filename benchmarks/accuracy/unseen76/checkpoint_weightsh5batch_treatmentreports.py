"""Conservation treatment-report classifier with per-batch weight snapshots
(checkpoint-bound).

Data path: tokenised treatment reports (integer token ids, generated with
numpy) are fed by tf.data.from_tensor_slices to model.fit.  Model: a large
frozen (trainable=False) 250k x 128 vocabulary embedding + pooled dense
head, so every weights file is ~128 MB while a step is cheap.  A SnapshotEveryBatch callback both
times the steps and, after taking its time stamp, writes
model.save_weights(...weights.h5) plus a JSON sidecar every
SAVE_EVERY batches into a temporary folder; the clock restarts after the
save.  Deliberate bottleneck: the frequent weight saves (checkpoint-bound).
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


BATCH = 64
STEPS = 16
EPOCHS = 3
SEQ = 120
VOCAB = 250_000
EMB = 128
NCLASS = 8
SAVE_EVERY = 1


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, NCLASS, n).astype(np.int32)
    x = (rng.zipf(1.3, (n, SEQ)) + y[:, None] * 997) % VOCAB
    return x.astype(np.int32), y


X, Y = make_data(4096, seed=76)


class SnapshotEveryBatch(keras.callbacks.Callback):
    def __init__(self, folder, tag):
        super().__init__()
        self.folder, self.tag = folder, tag
        self.gaps, self.last, self.save_seconds, self.saves = [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if batch % SAVE_EVERY == 0:
            path = os.path.join(self.folder, f"{self.tag}_snapshot.weights.h5")
            self.model.save_weights(path)
            with open(os.path.join(self.folder, f"{self.tag}_snapshot.json"), "w") as fh:
                json.dump({"epoch": self.epoch, "batch": batch}, fh)
            self.saves += 1
        after = time.perf_counter()
        self.save_seconds += after - now
        self.last = after


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    # frozen pretrained conservation-vocabulary table (not updated, but saved every time)
    x = keras.layers.Embedding(VOCAB, EMB, trainable=False, name="frozen_vocab")(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def make_dataset():
    return tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(4096, seed=1).repeat().batch(BATCH)


def run(ds, folder, tag):
    keras.utils.set_random_seed(76)
    model = build_model()
    snap = SnapshotEveryBatch(folder, tag)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[snap], verbose=0)
    return mean_after_warmup(snap.gaps), snap


def main():
    folder = tempfile.mkdtemp(prefix="u76_checkpoint_weightsh5batch_treatmentreports_")
    try:
        full, snap = run(make_dataset(), folder, "full")
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - WALL0
        print(f"treatmentreports: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
              f"{snap.saves} saves {snap.save_seconds:.1f}s = "
              f"{100*snap.save_seconds/wall:.0f}% of wall {wall:.1f}s")
        if TRUTH:
            xb, yb = next(iter(make_dataset()))
            compute, snap2 = run(tf.data.Dataset.from_tensors((xb, yb)).repeat(), folder, "truth")
            report_truth(full, compute)
            wall = time.perf_counter() - WALL0
            tot = snap.save_seconds + snap2.save_seconds
            print(f"  saves total {tot:.1f}s = {100*tot/wall:.0f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
