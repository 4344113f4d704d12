"""tfres.callbacks.MemoryBudget with a real, tiny model.fit whose memory grows every batch."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from tfres.errors import BudgetExceededError

MiB = 2**20


@pytest.fixture(scope="module")
def keras():  # one TensorFlow import for the module
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras

    return keras


def _model(keras):
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def _grower(keras, hog: list):
    class Grow(keras.callbacks.Callback):
        """Holds 4 MiB more after every batch, as a leak would."""

        def on_train_batch_end(self, batch, logs=None):
            hog.append(np.ones(4 * MiB // 8))
            time.sleep(0.005)

    return Grow()


def test_training_stops_saves_a_checkpoint_and_raises_with_figures(keras, tmp_path: Path) -> None:
    from tfres.callbacks import MemoryBudget

    model = _model(keras)
    x, y = np.ones((4000, 8), "float32"), np.ones((4000, 1), "float32")
    model.fit(x[:64], y[:64], verbose=0)  # warm up so the baseline includes TF's runtime
    base = psutil.Process().memory_info().rss
    hog: list = []
    ckpt = tmp_path / "ckpt" / "last.keras"
    cb = MemoryBudget(base + 100 * MiB, checkpoint_path=ckpt)
    ends: list[str] = []
    with pytest.raises(BudgetExceededError) as info:
        model.fit(
            x,
            y,
            batch_size=8,
            epochs=3,
            verbose=0,
            callbacks=[
                _grower(keras, hog),
                keras.callbacks.LambdaCallback(
                    on_train_end=lambda logs: ends.append("other callback ended")
                ),
                cb,
            ],
        )
    err = info.value
    assert err.budget_bytes == base + 100 * MiB
    assert err.used_bytes >= 0.9 * err.budget_bytes
    assert err.used_bytes < err.budget_bytes * 1.05
    assert "training stopped after epoch 0 batch" in str(err) and str(ckpt) in str(err)
    epoch, batch = cb.stopped_at
    assert epoch == 0 and batch < 499  # not the last batch: it ended early
    assert len(hog) == batch + 1  # stopped right at the next batch end
    assert ends == ["other callback ended"]
    assert cb.checkpoint == ckpt and ckpt.exists()
    assert [p.name for p in ckpt.parent.iterdir()] == ["last.keras"]  # no temp files left
    loaded = keras.models.load_model(ckpt)
    np.testing.assert_allclose(loaded.get_weights()[0], model.get_weights()[0])
    assert cb.budget is not None and cb.budget.triggered_at_seconds is not None
    hog.clear()


def test_within_budget_training_runs_to_the_end(keras, tmp_path: Path) -> None:
    from tfres.callbacks import MemoryBudget

    model = _model(keras)
    cb = MemoryBudget("90%", checkpoint_path=tmp_path / "w.weights.h5")
    history = model.fit(np.ones((64, 8)), np.ones((64, 1)), epochs=2, verbose=0, callbacks=[cb])
    assert len(history.history["loss"]) == 2
    assert cb.stopped_at is None and not (tmp_path / "w.weights.h5").exists()


def test_bad_arguments_are_one_line(keras) -> None:
    from tfres.callbacks import MemoryBudget

    with pytest.raises(ValueError, match=r"must end with .keras or .weights.h5 \(got 'x.ckpt'\)"):
        MemoryBudget("10%", checkpoint_path="x.ckpt")
    with pytest.raises(ValueError, match="cannot read size 'lots'"):
        MemoryBudget("lots")
