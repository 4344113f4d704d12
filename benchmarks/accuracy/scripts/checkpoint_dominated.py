# Saves a full checkpoint every few steps.
import os
import tempfile

import keras
import numpy as np

folder = tempfile.mkdtemp(prefix="ckpt-")
x = np.random.default_rng(0).random((2048, 256), dtype=np.float32)
model = keras.Sequential(
    [
        keras.Input((256,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
save = keras.callbacks.ModelCheckpoint(os.path.join(folder, "model.keras"), save_freq=4)
model.fit(x, x[:, :1], batch_size=64, epochs=2, verbose=0, callbacks=[save])
