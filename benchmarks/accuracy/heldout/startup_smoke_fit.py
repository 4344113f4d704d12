# A CI smoke test: build the model, fit two tiny batches to check the wiring, exit.
import time

started = time.perf_counter()
import keras  # noqa: E402
import numpy as np  # noqa: E402
from truth import report  # noqa: E402

imported = time.perf_counter()
x = np.random.default_rng(0).random((16, 32, 32, 3), dtype=np.float32)
y = np.arange(16) % 4
model = keras.Sequential(
    [
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(4),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
fit_started = time.perf_counter()
history = model.fit(x, y, batch_size=8, epochs=1, verbose=0)
fitted = time.perf_counter()
assert np.isfinite(history.history["loss"][-1])
print("smoke test passed, loss", history.history["loss"][-1])
report(
    import_seconds=imported - started,
    fit_seconds=fitted - fit_started,
    total_seconds=fitted - started,
)
