"""Piste condition reports text: token ids of patrol-written reports
("packed powder", "icy patches", "moguls on upper section") train a bag-of-
embeddings classifier; a drift-audit callback keeps a copy of the embedding
table after every batch in a module-level list that is never freed."""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


PHRASES = ["packed powder", "machine groomed", "icy patches", "moguls upper section", "fresh snow",
           "wind crust", "spring snow", "thin cover", "rocks exposed", "closed avalanche control",
           "heavy wet snow", "corduroy", "variable conditions", "hardpack", "slush at base"]
VOCAB = 20000
DIM = 64
SEQ = 128
N = 16384
BATCH = 128
STEPS = 80
EPOCHS = 5
EMBEDDING_AUDIT = []          # grows every batch, never cleared


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def make_reports(seed=89):
    rng = np.random.default_rng(seed)
    words = sorted(set(" ".join(PHRASES).split()))
    base = {w: i + 2 for i, w in enumerate(words)}
    y = rng.integers(0, 5, N)      # open / caution / expert only / closed / groomed tonight
    x = rng.integers(len(words) + 2, VOCAB, (N, SEQ))
    for i in range(N):
        ph = PHRASES[(y[i] * 3 + int(rng.integers(0, 3))) % len(PHRASES)].split()
        x[i, :len(ph)] = [base[w] for w in ph]
    return x.astype(np.int32), y.astype(np.int32)


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


class EmbeddingDriftAudit(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        table = self.model.get_layer("report_tokens").embeddings.numpy()
        EMBEDDING_AUDIT.append(table.copy())

    def on_epoch_end(self, epoch, logs=None):
        print("  epoch %d: audit snapshots %d, rss %.0f MiB" % (epoch, len(EMBEDDING_AUDIT), rss_mib()))


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, DIM, name="report_tokens")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(5, activation="softmax")(x)
    model = keras.Model(inp, out, name="piste_status")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, EmbeddingDriftAudit()], verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t


def main():
    x, y = make_reports()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=89).repeat().batch(BATCH).prefetch(2)
    full, fit_s = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print("pistereports normal: %.4f s/step, fit %.1f s, snapshots %d, rss %.0f MiB, wall %.1f s"
          % (full, fit_s, len(EMBEDDING_AUDIT), rss_mib(), time.perf_counter() - T0))
    if TRUTH:
        comp, _ = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("pistereports truth: compute %.4f s/step, input fraction %.3f, rss %.0f MiB" % (comp, frac, rss_mib()))


if __name__ == "__main__":
    main()
