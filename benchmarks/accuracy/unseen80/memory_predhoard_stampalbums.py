"""Stamp album pages: per-stamp descriptors (colour, perf gauge, watermark,
cancel type, paper, printing method) -> issuing country / issue group.

model.fit on in-memory descriptors. A callback embeds a fixed probe set of
album pages after every batch ("to watch how the embedding drifts") and
appends each float32 embedding matrix to a Python list that is never
trimmed, so host memory grows through the whole run.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import resource

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 128
STEPS = 75
EPOCHS = 3
N_FEAT = 96
N_GROUPS = 60
N_PROBE = 2048
EMBED = 1024


def synth_album(n, seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, N_GROUPS, size=n)
    centres = np.random.default_rng(77).normal(0, 1, size=(N_GROUPS, N_FEAT)).astype(np.float32)
    x = centres[group] + rng.normal(0, 1.2, size=(n, N_FEAT)).astype(np.float32)
    return x.astype(np.float32), group.astype(np.int32)


def build_model():
    inp = keras.Input((N_FEAT,))
    x = layers.Dense(256, activation="relu")(inp)
    x = layers.Dense(1024, activation="relu")(x)
    emb = layers.Dense(EMBED, activation="relu", name="page_embedding")(x)
    out = layers.Dense(N_GROUPS, activation="softmax")(emb)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
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
        g = self.gaps[5:]
        return sum(g) / len(g)


class EmbeddingDriftLog(keras.callbacks.Callback):
    """Keeps every probe embedding for a later drift plot (never freed)."""

    def __init__(self, probe):
        super().__init__()
        self.probe = tf.constant(probe)
        self.pages = []
        self.rss_trace = []

    def on_train_begin(self, logs=None):
        self.embedder = keras.Model(self.model.inputs,
                                    self.model.get_layer("page_embedding").output)

    def on_train_batch_end(self, batch, logs=None):
        self.pages.append(self.embedder(self.probe, training=False).numpy())

    def on_epoch_end(self, epoch, logs=None):
        rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        self.rss_trace.append(round(rss_gib, 2))


def train(dataset, probe):
    keras.utils.set_random_seed(29)
    model = build_model()
    timer = StepTimer()
    drift = EmbeddingDriftLog(probe)
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer, drift], verbose=0)
    held = sum(p.nbytes for p in drift.pages) / 2**30
    return timer.seconds_per_step(), held, drift.rss_trace


def main():
    x, y = synth_album(BATCH * STEPS, 1847)
    probe, _ = synth_album(N_PROBE, 1840)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=4).batch(BATCH).repeat()
    full, held, trace = train(ds, probe)
    emit({"steps_per_second": 1.0 / full})
    print(f"[stampalbums] normal run: {full * 1000:.1f} ms/step, embeddings held {held:.2f} GiB, "
          f"peak RSS by epoch {trace} GiB, wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        compute, _, _ = train(fixed, probe)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[stampalbums] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
