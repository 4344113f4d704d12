"""IT-helpdesk ticket routing (8 resolver groups) from tokenised ticket titles and bodies.
Token-id sequences are synthesised into in-memory numpy arrays and trained with model.fit
(Embedding + pooling + MLP). To study Adam's update dynamics, a batch-end callback copies the
optimizer's moment slots (m and v for every variable) to numpy every few batches and appends
them to a Python list that is never trimmed, so resident memory grows throughout training.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
VOCAB = 16000
EMB = 1024
SEQ = 64
N = 6144
BATCH = 64
EPOCHS = 2
SNAP_EVERY = 16


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class SlotSnapshots(keras.callbacks.Callback):
    """Keeps a copy of every optimizer slot variable every SNAP_EVERY batches."""

    def __init__(self):
        super().__init__()
        self.history = []
        self.count = 0

    def on_train_batch_end(self, batch, logs=None):
        self.count += 1
        if self.count % SNAP_EVERY == 0:
            opt = self.model.optimizer
            slots = {v.path: np.array(v.numpy(), copy=True) for v in opt.variables
                     if len(v.shape) > 0}
            self.history.append({"step": self.count, "slots": slots})


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_tickets(rng):
    y = rng.integers(0, 8, N).astype(np.int32)
    x = rng.zipf(1.2, (N, SEQ)) % VOCAB
    topical = 1000 + y[:, None] * 500 + rng.integers(0, 500, (N, SEQ))
    mask = rng.random((N, SEQ)) < 0.3
    x = np.where(mask, topical, x).astype(np.int32)
    return x, y


def make_model():
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, EMB)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(8)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_memory_optslot_snapshots_fit_ticketrouting_")
    try:
        x, y = make_tickets(np.random.default_rng(SEED))
        steps = int(np.ceil(N / BATCH))
        model = make_model()
        timer, snaps = StepTimer(), SlotSnapshots()
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, snaps], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        kept_mb = sum(a.nbytes for h in snaps.history for a in h["slots"].values()) / 2 ** 20
        msg = (f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f} snapshots={len(snaps.history)} "
               f"kept_mb={kept_mb:.0f}")
        if truth:
            del snaps
            one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            timer2, snaps2 = StepTimer(), SlotSnapshots()
            make_model().fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2, snaps2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"memory_optslot_snapshots_fit_ticketrouting: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
