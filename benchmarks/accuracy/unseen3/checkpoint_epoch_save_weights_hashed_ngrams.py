# Routes search queries to one of 64 shop categories with a fastText-like model: hashed word
# and bigram ids look up a large embedding table that is averaged and classified. Training runs
# for many epochs over a small hand-labelled set (two batches each); a callback writes the
# weights to last.weights.h5 after every epoch (so a crash loses at most one epoch) and keeps
# an extra copy every 15 epochs.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np

BUCKETS, DIM, TOKENS, CATEGORIES, BATCH, LABELLED = 1_000_000, 64, 24, 64, 512, 1024
folder = tempfile.mkdtemp(prefix="query-router-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
categories = rng.integers(0, CATEGORIES, LABELLED)
topic_tokens = rng.integers(0, BUCKETS, (CATEGORIES, 50))
queries = np.where(
    rng.random((LABELLED, TOKENS)) < 0.6,
    topic_tokens[categories[:, None], rng.integers(0, 50, (LABELLED, TOKENS))],
    rng.integers(0, BUCKETS, (LABELLED, TOKENS)),
).astype(np.int32)


class SaveWeightsEveryEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        self.model.save_weights(os.path.join(folder, "last.weights.h5"))
        if (epoch + 1) % 15 == 0:
            name = f"epoch{epoch + 1:03d}-loss{logs['loss']:.3f}.weights.h5"
            self.model.save_weights(os.path.join(folder, name))


model = keras.Sequential(
    [
        keras.Input((TOKENS,), dtype="int32"),
        keras.layers.Embedding(BUCKETS, DIM),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(CATEGORIES),
    ]
)
model.compile(
    keras.optimizers.SGD(0.5),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
history = model.fit(
    queries,
    categories,
    batch_size=BATCH,
    epochs=80,
    callbacks=[SaveWeightsEveryEpoch()],
    verbose=2,
)
final = history.history["accuracy"][-1]
print("kept", len(os.listdir(folder)), "weight files; final accuracy", round(final, 3))
