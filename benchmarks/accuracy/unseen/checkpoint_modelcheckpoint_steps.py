# Trains a click-through model with wide hidden layers and keeps a full .keras checkpoint
# (weights and optimizer state) written by ModelCheckpoint every few batches, so a
# preempted job can resume close to where it stopped.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np

folder = tempfile.mkdtemp(prefix="ctr-ckpt-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
features = rng.normal(size=(6400, 256)).astype(np.float32)
clicked = (features[:, :6].sum(axis=1) + rng.normal(0, 1, 6400) > 0).astype(np.float32)

model = keras.Sequential(
    [
        keras.Input((256,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile(
    keras.optimizers.Adam(3e-4), "binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")]
)
checkpoint = keras.callbacks.ModelCheckpoint(
    os.path.join(folder, "ctr-latest.keras"), save_freq=2, save_weights_only=False
)
history = model.fit(features, clicked, batch_size=64, epochs=2, callbacks=[checkpoint], verbose=0)
print("final AUC", round(history.history["auc"][-1], 4))
