"""A small classification data set as a repeating tf.data pipeline, for the tests that train
a tiny Keras model (the step alone, the loop's call alone)."""

from __future__ import annotations

from typing import Any

import numpy as np


def classification_batches(rows: int = 160, features: int = 8, batch: int = 16) -> Any:
    """``rows`` normal features with labels in 0-2, in batches of ``batch``, repeated, not
    shuffled (a test may know which rows a step got)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, features)).astype("float32")
    y = rng.integers(0, 3, rows)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).repeat()
