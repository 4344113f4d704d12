# A smoke test: build a model and fit it for a handful of steps.
import keras
import numpy as np

x = np.random.default_rng(0).random((64, 8), dtype=np.float32)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8), keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(x, x[:, :1], batch_size=16, epochs=2, verbose=0)
print("ok")
