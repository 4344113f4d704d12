"""Parish-register transcriptions -> entry type (baptism / marriage / burial / banns / other).

Input path: the whole register extract is encoded to int32 character ids up
front and held in memory; tf.data.Dataset.from_tensor_slices -> shuffle ->
batch -> prefetch feeds model.fit.  The model is a fairly wide stacked
Conv1D over the characters.  Expected bottleneck: compute.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 64, 80, 3
SEQ, VOCAB, N = 256, 64, 4096
KINDS = ["baptism", "marriage", "burial", "banns", "memorandum"]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def register_extract(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(KINDS), N).astype(np.int32)
    chars = rng.integers(1, VOCAB, (N, SEQ)).astype(np.int32)
    # plant a kind-specific formula ("bapt.", "mar.", "bur.", "pub. banns") at a random offset
    for i, k in enumerate(labels):
        off = rng.integers(0, SEQ - 8)
        chars[i, off:off + 6] = (np.arange(6) * (k + 3)) % (VOCAB - 1) + 1
    return chars, labels


def build_model():
    model = keras.Sequential([
        keras.Input((SEQ,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 64),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(len(KINDS)),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


keras.utils.set_random_seed(81)
chars, labels = register_extract(81)
ds = (tf.data.Dataset.from_tensor_slices((chars, labels)).shuffle(N, seed=81)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
full, hist = train(ds)
emit({"steps_per_second": 1.0 / full})
print("parishregisters: %.1f ms/step, acc %.3f, wall so far %.1f s" % (full * 1e3, hist["accuracy"][-1], time.perf_counter() - T0))
if TRUTH:
    batch = (tf.constant(chars[:BATCH]), tf.constant(labels[:BATCH]))
    compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("parishregisters truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
