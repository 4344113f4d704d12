"""Precipitation nowcasting on synthetic weather-radar reflectivity frames.

A small ConvNet looks at the last four 64x64 radar frames and predicts whether heavy
rain (> 35 dBZ over a tenth of the area) will cover the airport box in the centre of
the next frame. There is no dataset on disk: every batch is rendered on the fly by a
plain Python generator (drifting Gaussian rain cells drawn with numpy) and the
generator is passed straight to ``model.fit``.

Run ``python input_generator_radar_nowcast.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

SIZE = 64
FRAMES = 4
BATCH = 32
STEPS = 150


def radar_batches(batch_size, seed=0):
    """Yields (frames, heavy_rain) batches forever, one drawn sample at a time."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    while True:
        x = np.zeros((batch_size, SIZE, SIZE, FRAMES), np.float32)
        y = np.zeros((batch_size, 1), np.float32)
        for i in range(batch_size):
            n_cells = rng.integers(7, 14)
            pos = rng.uniform(0, SIZE, size=(n_cells, 2))
            vel = rng.normal(0, 2.5, size=(n_cells, 2))
            amp = rng.uniform(15, 55, size=n_cells)
            width = rng.uniform(3, 10, size=n_cells)
            for t in range(FRAMES + 1):
                frame = rng.normal(0, 1.5, size=(SIZE, SIZE)).astype(np.float32)
                for c in range(n_cells):
                    cy, cx = pos[c] + t * vel[c]
                    dist2 = (yy - cy) ** 2 + (xx - cx) ** 2
                    frame += amp[c] * np.exp(-dist2 / (2 * width[c] ** 2))
                if t < FRAMES:
                    x[i, :, :, t] = frame / 60.0
                else:
                    airport = frame[24:40, 24:40]
                    y[i, 0] = float((airport > 35).mean() > 0.1)
        yield x, y


def build_model():
    model = keras.Sequential(
        [
            keras.Input((SIZE, SIZE, FRAMES)),
            keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


class StepClock(keras.callbacks.Callback):
    """Remembers when each training batch finished."""

    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        return (self.ends[-1] - self.ends[skip - 1]) / (len(self.ends) - skip)


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    full = train(radar_batches(BATCH))
    append_result({"steps_per_second": 1.0 / full})
    summary = f"radar nowcast: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

    if args.truth:
        x, y = next(radar_batches(BATCH, seed=1))
        cached = tf.data.Dataset.from_tensors((x, y)).repeat()
        compute = train(cached)
        fraction = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": fraction})
        summary += f", compute-only {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
