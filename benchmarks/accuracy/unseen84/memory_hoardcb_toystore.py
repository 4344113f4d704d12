import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
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


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

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


# Toy-store shelf recommender: basket rows of SKU ids (last 20 items a
# customer picked up) predict the toy department of the next item.  A
# well-meant "embedding drift audit" callback keeps a NumPy copy of the
# SKU embedding table after every batch in a module-level list that is
# never cleared, so host memory grows for the whole run.
N_SKUS = 18000
EMB = 48
HIST = 20
N_DEPTS = 16
N_BASKETS = 40000
BATCH = 128
STEPS = 200
EPOCHS = 3

EMBEDDING_AUDIT = []


class EmbeddingAudit(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        table = self.model.get_layer("sku_embedding").embeddings
        EMBEDDING_AUDIT.append(np.array(table.numpy(), copy=True))


def make_baskets(seed):
    rng = np.random.default_rng(seed)
    dept_of_sku = rng.integers(0, N_DEPTS, N_SKUS)
    pop = rng.zipf(1.3, (N_BASKETS, HIST)) % N_SKUS
    y = dept_of_sku[pop[:, -1]]
    return pop.astype(np.int32), y.astype(np.int32)


def make_model():
    inp = keras.Input((HIST,), dtype="int32")
    x = keras.layers.Embedding(N_SKUS, EMB, name="sku_embedding")(inp)
    x = keras.layers.Conv1D(192, 3, activation="relu", padding="same")(x)
    x = keras.layers.Conv1D(256, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(N_DEPTS, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def run(ds):
    keras.utils.set_random_seed(97)
    model = make_model()
    timer = StepTimer()
    audit = EmbeddingAudit()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, audit], verbose=0)
    return timer.seconds_per_step()


def main():
    x, y = make_baskets(101)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_BASKETS, seed=6).batch(BATCH).repeat().prefetch(2)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"toystore: {full * 1000:.1f} ms/step, audit copies {len(EMBEDDING_AUDIT)}, "
          f"RSS {rss_mib():.0f} MiB, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"toystore truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
              f"audit copies {len(EMBEDDING_AUDIT)}, RSS {rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
