"""The two models benchmarks/batch_size.py sizes: one small, one large (wide dense layers).

Wide dense layers on a few inputs keep the arithmetic cheap while the activations (and so
the memory) grow fast with the batch size, which makes the memory limit the binding one.
"""

from __future__ import annotations

import numpy as np


def _dense(width: int):
    import keras

    model = keras.Sequential(
        [
            keras.Input((16,)),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse")
    return model


def build_small():
    """0.33 M parameters; a 4096-wide hidden layer (16 KiB of activations per sample)."""
    return _dense(4096)


def build_large():
    """2.7 M parameters; a 32768-wide hidden layer (128 KiB of activations per sample)."""
    return _dense(32768)


def make_data():
    rng = np.random.default_rng(0)
    return rng.random((512, 16), dtype=np.float32), rng.random((512, 1), dtype=np.float32)
