# A small CNN on images held in memory as NumPy arrays passed straight to fit.
import time

import keras
import numpy as np
from truth import report

x = np.random.default_rng(1).random((2048, 32, 32, 3), dtype=np.float32)
y = (x.mean(axis=(1, 2, 3)) > 0.5).astype("float32")
model = keras.Sequential(
    [
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy")
model.fit(x[:256], y[:256], batch_size=64, verbose=0)
start = time.perf_counter()
model.fit(x, y, batch_size=64, epochs=3, verbose=0)
report(steps_per_second=96 / (time.perf_counter() - start))
