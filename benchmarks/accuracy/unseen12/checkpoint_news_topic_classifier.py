"""News-article topic classification with a large word-embedding model and frequent checkpoints.

The vocabulary is big (150k tokens x 192 dims), so the model carries ~29M parameters;
a ModelCheckpoint callback writes the full model (weights + optimizer state) to a
.keras file every few batches so a preempted job can resume.

    python checkpoint_news_topic_classifier.py [--truth]
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

VOCAB = 150_000
EMBED = 192
MAX_LEN = 200
TOPICS = ["politics", "sport", "business", "science", "culture", "health", "tech", "world"]
BATCH_SIZE = 64
STEPS = 36
SAVE_EVERY = 2  # batches


def synth_articles(n, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(TOPICS), size=n)
    # Zipf-distributed background words plus topic-specific keyword ranges
    docs = np.minimum(rng.zipf(1.3, size=(n, MAX_LEN)), VOCAB - 1)
    keyword_base = 1000 + labels * 5000
    mask = rng.random((n, MAX_LEN)) < 0.15
    docs[mask] = (keyword_base[:, None] + rng.integers(0, 5000, size=(n, MAX_LEN)))[mask]
    lengths = rng.integers(60, MAX_LEN, size=n)
    docs[np.arange(MAX_LEN)[None, :] >= lengths[:, None]] = 0
    return docs.astype(np.int32), labels.astype(np.int32)


def build_model():
    inp = keras.Input((MAX_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, EMBED, mask_zero=True)(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    avg = keras.layers.GlobalAveragePooling1D()(x)
    mx = keras.layers.GlobalMaxPooling1D()(x)
    h = keras.layers.Dense(128, activation="relu")(keras.layers.Concatenate()([avg, mx]))
    h = keras.layers.Dropout(0.3)(h)
    out = keras.layers.Dense(len(TOPICS), activation="softmax")(h)
    model = keras.Model(inp, out, name="news_topics")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimes(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.t = []

    def on_train_batch_end(self, batch, logs=None):
        self.t.append(time.perf_counter())


def train(dataset, ckpt_dir):
    keras.utils.set_random_seed(4)
    model = build_model()
    timer = StepTimes()
    ckpt = keras.callbacks.ModelCheckpoint(
        filepath=os.path.join(ckpt_dir, "news_topics_latest.keras"),
        save_freq=SAVE_EVERY,
    )
    hist = model.fit(dataset, steps_per_epoch=STEPS, epochs=1, callbacks=[ckpt, timer], verbose=0)
    t = timer.t
    return (t[-1] - t[4]) / (len(t) - 5), hist.history


def write(rec):
    if "ACCURACY_OUT" in os.environ:
        with open(os.environ["ACCURACY_OUT"], "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    docs, labels = synth_articles(STEPS * BATCH_SIZE)
    ds = tf.data.Dataset.from_tensor_slices((docs, labels)).shuffle(2048).batch(BATCH_SIZE)
    ds = ds.repeat().prefetch(2)
    ckpt_dir = tempfile.mkdtemp(prefix="news_ckpt_")

    full, hist = train(ds, ckpt_dir)
    write({"steps_per_second": 1.0 / full})
    size_mb = os.path.getsize(os.path.join(ckpt_dir, "news_topics_latest.keras")) / 2**20
    msg = (
        f"news: {STEPS} steps, checkpoint every {SAVE_EVERY} ({size_mb:.0f} MB), "
        f"{1 / full:.2f} steps/s, acc {hist['accuracy'][-1]:.3f}"
    )
    if args.truth:
        batch = next(iter(ds))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), ckpt_dir)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
