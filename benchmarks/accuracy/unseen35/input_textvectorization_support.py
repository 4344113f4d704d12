"""Support-ticket routing: raw ticket strings go through an adapted
keras.layers.TextVectorization (unigrams + bigrams, tf-idf) inside a tf.data
map, one ticket at a time, then batched into model.fit."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, VOCAB = 64, 250, 4, 8000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last, self.n = [], None, 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None and self.n >= 5:
            self.gaps.append(now - self.last)
        self.last = now; self.n += 1
    def sec_per_step(self):
        return float(np.mean(self.gaps))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


QUEUES = ["billing", "login", "shipping", "refund", "bug", "feature"]


def make_tickets(n, rng):
    common = [f"w{i}" for i in range(1500)]
    topical = {q: [f"{q}_{i}" for i in range(60)] for q in QUEUES}
    texts, labels = [], []
    for _ in range(n):
        k = int(rng.integers(len(QUEUES)))
        length = int(rng.integers(40, 160))
        words = [common[j] for j in rng.integers(0, len(common), size=length)]
        for pos in rng.integers(0, length, size=6):
            words[pos] = topical[QUEUES[k]][int(rng.integers(60))]
        texts.append("Hello team, " + " ".join(words) + ". Thanks!")
        labels.append(k)
    return np.array(texts), np.array(labels, np.int32)


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    texts, labels = make_tickets(6000, np.random.default_rng(0))
    vectorizer = keras.layers.TextVectorization(max_tokens=VOCAB, ngrams=2, output_mode="tf_idf")
    vectorizer.adapt(texts[:2000], batch_size=256)

    def featurize(text, label):
        return vectorizer(tf.expand_dims(text, 0))[0], label

    ds = (tf.data.Dataset.from_tensor_slices((texts, labels)).shuffle(6000).repeat()
          .map(featurize)          # serial, per ticket
          .batch(BATCH).prefetch(1))

    def train(data):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([
            keras.Input((VOCAB,)),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(len(QUEUES)),
        ])
        model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        timer = StepTimer()
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        return timer.sec_per_step()

    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"textvectorization_support: {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
