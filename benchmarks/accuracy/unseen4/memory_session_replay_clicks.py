# Next-click prediction from recommender logs. A Python generator turns raw session logs
# (item ids, dwell times, hours, devices) into per-event feature matrices and yields them to
# model.fit. To "mine hard negatives later", the loader also keeps every batch it has
# produced in a replay list that is never trimmed, so host memory grows by the size of
# one batch (about 7.5 MB) at every training step.
# Memory budget a user would give this job: 4 GiB.
import keras
import numpy as np

HISTORY, FEATURES, BATCH, ITEMS = 64, 76, 384, 5000
rng = np.random.default_rng(0)
item_vectors = rng.normal(0, 1, (ITEMS, FEATURES - 12)).astype(np.float32)
popularity = rng.zipf(1.3, ITEMS).clip(max=1000).astype(np.float32)


class SessionLoader:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.replay = []  # every batch ever produced, kept for hard-negative mining

    def batch(self):
        items = self.rng.integers(0, ITEMS, (BATCH, HISTORY))
        dwell = self.rng.exponential(30, (BATCH, HISTORY, 1)).astype(np.float32)
        hour = self.rng.integers(0, 24, (BATCH, HISTORY))
        device = self.rng.integers(0, 3, (BATCH, HISTORY))
        x = np.concatenate(
            [
                item_vectors[items],
                np.log1p(dwell) / 5,
                np.sin(hour * np.pi / 12)[..., None],
                np.cos(hour * np.pi / 12)[..., None],
                np.eye(3, dtype=np.float32)[device],
                np.log1p(popularity[items])[..., None] / 7,
                np.zeros((BATCH, HISTORY, 5), np.float32),
            ],
            axis=-1,
        ).astype(np.float32)
        target = np.sum(item_vectors[items[:, -1]] * item_vectors[items[:, -2]], axis=1) / 8
        y = (target + 0.1 * dwell[:, -1, 0] / 30 > 0.05).astype(np.float32)
        self.replay.append((x, y))
        return x, y

    def __iter__(self):
        while True:
            yield self.batch()


events = keras.Input((HISTORY, FEATURES))
h = keras.layers.Dense(128, activation="relu")(events)
attention = keras.layers.Softmax(axis=1)(keras.layers.Dense(1)(h))
pooled = keras.ops.sum(h * attention, axis=1)
last = keras.layers.Dense(64, activation="relu")(events[:, -1, :])
h = keras.layers.Concatenate()([pooled, last])
h = keras.layers.Dense(128, activation="relu")(h)
model = keras.Model(events, keras.layers.Dense(1, activation="sigmoid")(h))
model.compile(keras.optimizers.Adam(1e-3), "binary_crossentropy", metrics=["AUC"])

loader = SessionLoader()
model.fit(iter(loader), steps_per_epoch=100, epochs=3, verbose=2)
print("batches kept for hard-negative mining:", len(loader.replay))
