"""Seismic event detection on single-station waveform snippets.

The waveform archive is a large .npz file; a keras.utils.PyDataset reads the
slice for each batch from it and standardises every trace.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_TRACES = 28000
TRACE_LEN = 1024
BATCH = 64
STEPS = 80
LR = 1e-3


def write_archive(path, seed=0):
    rng = np.random.default_rng(seed)
    waves = rng.normal(scale=1.0, size=(N_TRACES, TRACE_LEN)).astype(np.float32)
    labels = (rng.random(N_TRACES) < 0.3).astype(np.int32)
    t = np.arange(TRACE_LEN, dtype=np.float32)
    for i in np.flatnonzero(labels):
        onset = rng.integers(100, TRACE_LEN - 300)
        env = np.exp(-np.clip(t - onset, 0, None) / 80.0) * (t >= onset)
        waves[i] += 6 * env * np.sin(t * rng.uniform(0.1, 0.4))
    waves = waves * rng.uniform(10, 500, size=(N_TRACES, 1)).astype(np.float32)
    np.savez(path, waves=waves, labels=labels)


class WaveformArchive(keras.utils.PyDataset):
    def __init__(self, path, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.path = path
        self.batch_size = batch_size
        with np.load(path) as data:
            self.n = len(data["labels"])

    def __len__(self):
        return self.n // self.batch_size

    def __getitem__(self, idx):
        lo, hi = idx * self.batch_size, (idx + 1) * self.batch_size
        with np.load(self.path) as data:
            x = data["waves"][lo:hi]
            y = data["labels"][lo:hi]
        x = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-6)
        return x[..., None].astype(np.float32), y.astype(np.float32)


def build_model():
    inp = keras.Input((TRACE_LEN, 1))
    x = inp
    for filters in (32, 64, 64, 96):
        x = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u28_input_pydataset_seismic_")
    try:
        path = os.path.join(workdir, "waveforms.npz")
        write_archive(path)
        archive = WaveformArchive(path, BATCH, workers=1, use_multiprocessing=False)

        model = build_model()
        timer = StepTimer()
        model.fit(archive, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=2)
        full = timer.seconds_per_step()
        write_out({"steps_per_second": 1.0 / full})
        summary = f"seismic detector: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

        if args.truth:
            xb, yb = archive[0]
            fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(fixed, steps_per_epoch=STEPS, epochs=1, callbacks=[timer2], verbose=2)
            compute = timer2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
