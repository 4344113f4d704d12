# Keeps every batch's predictions (and a copy of the batch) "for later": memory grows.
import keras
import numpy as np

model = keras.Sequential(
    [keras.Input((256,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(256)]
)
model.compile("adam", "mse")
kept = []
rng = np.random.default_rng(0)
for _ in range(60):
    x = rng.random((2048, 256), dtype=np.float32)
    model.train_on_batch(x, x)
    kept.append((x.copy(), model.predict_on_batch(x), rng.random((2048, 2048), dtype=np.float32)))
print("kept", len(kept))
