import time; T0 = time.perf_counter()
"""Ranger patrol reports -> incident category (wildlife, fire, trail damage, ...).

A text classifier over tokenised patrol reports. The team's callback
archives the full model (.keras, optimizer state included) after every
batch so a preempted patrol-laptop run never loses work. The same
callback stamps step times: it stamps first, then saves, then restarts the
clock, so no step gap contains a save. Saves happen in both runs.
"""
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

BATCH = 64
STEPS = 70
EPOCHS = 3
SAVE_EVERY = 1
VOCAB = 30000
MAXLEN = 60
CLASSES = 7
SAVE_SECONDS = [0.0]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StampAndArchive(keras.callbacks.Callback):
    def __init__(self, root, tag):
        super().__init__()
        self.root, self.tag = root, tag
        self.gaps = []
        self.last = None
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            path = os.path.join(self.root, f"{self.tag}_patrols_{self.saves % 3}.keras")
            self.model.save(path)
            SAVE_SECONDS[0] += time.perf_counter() - t
            self.saves += 1
        self.last = time.perf_counter()

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_reports(n, seed=82):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, n).astype(np.int32)
    x = rng.zipf(1.3, (n, MAXLEN)) % VOCAB
    x[:, :5] = (y[:, None] * 97 + np.arange(5)) % VOCAB  # category-specific keywords
    return x.astype(np.int32), y


def build_model():
    keras.utils.set_random_seed(82)
    inp = keras.Input((MAXLEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 96)(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    root = tempfile.mkdtemp(prefix="u82_checkpoint_archiveburst_rangerpatrols_")
    try:
        x, y = make_reports(BATCH * STEPS)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().prefetch(2)
        cb = StampAndArchive(root, "run")
        model = build_model()
        model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
        full = cb.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"rangerpatrols: {full * 1000:.1f} ms/step over {len(cb.gaps)} gaps, {cb.saves} saves"
        if TRUTH:
            batch = (x[:BATCH], y[:BATCH])
            tcb = StampAndArchive(root, "truth")
            tmodel = build_model()
            tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[tcb], verbose=0)
            compute = tcb.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
        wall = time.perf_counter() - T0
        print(msg + f", saving {SAVE_SECONDS[0]:.1f} s of wall {wall:.1f} s = {100 * SAVE_SECONDS[0] / wall:.1f}%")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
