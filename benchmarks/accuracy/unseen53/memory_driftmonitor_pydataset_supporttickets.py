"""Support-ticket priority model with an input drift monitor that never forgets.

Tickets are stored in memory as hashed token-id arrays; a keras.utils.PyDataset
turns each batch into dense bag-of-words count vectors for model.fit. For a
"feature drift report" the dataset also appends a copy of every batch matrix it
serves to a list that is never trimmed, so resident memory climbs steadily
through training.
"""
import os, sys, json, time, tempfile, shutil, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 64, 300, 3
DIM, NCLS, TOKENS = 8192, 4, 120
N = BATCH * STEPS


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


class TicketDataset(keras.utils.PyDataset):
    def __init__(self, tokens, labels, **kwargs):
        super().__init__(**kwargs)
        self.tokens, self.labels = tokens, labels
        self.drift_log = []          # every served batch, kept for the drift report

    def __len__(self):
        return len(self.tokens) // BATCH

    def __getitem__(self, idx):
        tok = self.tokens[idx * BATCH:(idx + 1) * BATCH]
        x = np.zeros((BATCH, DIM), np.float32)
        np.add.at(x, (np.repeat(np.arange(BATCH), TOKENS), tok.ravel()), 1.0)
        x = np.log1p(x)
        self.drift_log.append(x.copy())
        return x, self.labels[idx * BATCH:(idx + 1) * BATCH]


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((DIM,)),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(NCLS, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(data):
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_memory_driftmonitor_pydataset_supporttickets_")
    try:
        rng = np.random.default_rng(SEED)
        labels = rng.integers(0, NCLS, N).astype(np.int32)
        tokens = rng.integers(0, DIM, (N, TOKENS)).astype(np.int64)
        tokens[:, :10] = labels[:, None] * 50 + np.arange(10)
        ds = TicketDataset(tokens, labels)
        full = train(ds)
        rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step, drift log {len(ds.drift_log)} batches, peak RSS {rss_gib:.2f} GiB"
        ds.drift_log.clear()
        if "--truth" in sys.argv:
            xb, yb = ds[0]
            ds.drift_log.clear()
            comp = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"memory_driftmonitor_pydataset_supporttickets: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
