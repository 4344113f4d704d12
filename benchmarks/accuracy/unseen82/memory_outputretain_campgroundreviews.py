import time; T0 = time.perf_counter()
"""Campground reviews -> star rating (1-5).

A Conv1D text model over tokenised reviews. A "drift dashboard" callback
copies the full word-embedding table to host memory after every batch so
that an analyst can later plot how review vocabulary embeddings moved.
The snapshots are kept in a list that is never trimmed or freed, so host
memory grows steadily through the run.
"""
import json
import os
import resource
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 200
EPOCHS = 3
VOCAB = 20000
EMBED = 40
MAXLEN = 160
SNAPSHOTS = []   # module level: every run's snapshots stay alive


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024 ** 2
    return 0.0


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


class EmbeddingDriftArchive(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        table = self.model.get_layer("review_tokens").embeddings
        SNAPSHOTS.append(np.array(table.numpy(), copy=True))

    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: {len(SNAPSHOTS)} embedding snapshots, RSS {rss_gib():.2f} GiB")


def make_reviews(n, seed=82):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, n).astype(np.int32)
    x = rng.zipf(1.25, (n, MAXLEN)) % VOCAB
    x[:, ::17] = (y[:, None] * 131 + 7) % VOCAB
    return x.astype(np.int32), y


def build_model():
    keras.utils.set_random_seed(82)
    inp = keras.Input((MAXLEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, EMBED, name="review_tokens")(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(5)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    x, y = make_reviews(BATCH * STEPS)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().prefetch(2)
    timer = StepTimer()
    model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer, EmbeddingDriftArchive()], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"campgroundreviews: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps"
    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer, EmbeddingDriftArchive()], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(msg + f", {len(SNAPSHOTS)} snapshots, peak RSS {peak:.2f} GiB, "
          f"wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
