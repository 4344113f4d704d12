# Trains briefly, then evaluates on a large set and predicts on it every epoch.
import keras
import numpy as np

rng = np.random.default_rng(0)
x, xv = rng.random((1024, 64), dtype=np.float32), rng.random((40000, 64), dtype=np.float32)
model = keras.Sequential(
    [
        keras.Input((64,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
for _epoch in range(2):
    model.fit(x, x[:, :1], batch_size=64, epochs=1, verbose=0)
    model.evaluate(xv, xv[:, :1], batch_size=32, verbose=0)
    model.predict(xv[:10000], batch_size=32, verbose=0)
