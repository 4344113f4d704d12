"""Stop training cleanly, with a checkpoint, before it uses more host memory than allowed.

TensorFlow has no host-memory cap; tfres watches the process and ends ``fit`` at the next
batch once 90% of the budget is used, saves the model, and raises BudgetExceededError.

    python examples/memory_budget.py
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

import tfres


def main() -> None:
    import keras
    import psutil

    rng = np.random.default_rng(0)
    x = rng.normal(size=(4096, 32)).astype("float32")
    y = rng.normal(size=(4096, 1)).astype("float32")
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")

    # a budget 200 MiB above what the process uses now; a leak below eats it up
    budget_bytes = psutil.Process().memory_info().rss + 200 * 2**20
    hoard: list[np.ndarray] = []

    class Leak(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: object = None) -> None:
            hoard.append(np.ones(8 * 2**20 // 8))  # 8 MiB a batch, never freed

    checkpoint = os.path.join(tempfile.mkdtemp(), "model.keras")
    guard = tfres.callbacks.MemoryBudget(budget_bytes, checkpoint_path=checkpoint)
    try:
        model.fit(x, y, epochs=50, batch_size=32, verbose=0, callbacks=[Leak(), guard])
        print("training finished within the budget")
    except tfres.BudgetExceededError as err:
        print(f"stopped: {err}")
        print(f"checkpoint saved: {os.path.exists(checkpoint)} ({checkpoint})")


if __name__ == "__main__":
    main()
