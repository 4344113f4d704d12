"""HVAC fault detection across a building portfolio: each building's minute-level sensor
log is a CSV file; tf.data interleaves per-building from_generator pipelines that load
the CSV with pandas and compute rolling medians, 90th percentiles and robust scores per
window, then batches the windows for model.fit of a 1-D conv network.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import pandas as pd
import tensorflow as tf
import keras

BATCH = 32
STEPS = 45
EPOCHS = 2
WIN = 96
N_BUILDINGS = 8
ROWS = 6000
CHANNELS = ["supply_temp", "return_temp", "airflow", "damper", "fan_kw", "outdoor_temp"]
NF = len(CHANNELS) * 4


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def write_building(path, rng):
    t = np.arange(ROWS)
    base = np.sin(t / 1440 * 2 * np.pi)
    fault = (rng.random(ROWS // WIN + 1) < 0.3).repeat(WIN)[:ROWS]
    df = pd.DataFrame({
        "ts": pd.date_range("2026-01-01", periods=ROWS, freq="min").astype(str),
        "supply_temp": 13 + base + rng.normal(0, 0.3, ROWS) + 2.5 * fault,
        "return_temp": 22 + 0.5 * base + rng.normal(0, 0.3, ROWS),
        "airflow": 800 + 100 * base + rng.normal(0, 30, ROWS) - 150 * fault,
        "damper": np.clip(40 + 20 * base + rng.normal(0, 5, ROWS), 0, 100),
        "fan_kw": 3 + 0.5 * base + rng.normal(0, 0.2, ROWS),
        "outdoor_temp": 5 + 8 * base + rng.normal(0, 1, ROWS),
        "fault": fault.astype(int)})
    df.to_csv(path, index=False)


def windows(path):
    df = pd.read_csv(path.decode() if isinstance(path, bytes) else path, parse_dates=["ts"])
    df = df.set_index("ts")
    rng = np.random.default_rng(abs(hash(path)) % 2**32)
    while True:
        for start in rng.permutation(len(df) - 2 * WIN)[:200]:
            w = df.iloc[start:start + 2 * WIN]
            sig = w[CHANNELS]
            roll = sig.rolling(24, min_periods=1)
            med, q90 = roll.median(), roll.quantile(0.9)
            feats = pd.concat([sig, med, q90, (sig - med) / (q90 - med + 1e-3)], axis=1)
            x = feats.iloc[WIN:].to_numpy(np.float32)
            x = (x - x.mean(0)) / (x.std(0) + 1e-3)
            yield x, np.float32(w["fault"].iloc[WIN:].mean() > 0.5)


def build_model():
    inp = keras.Input((WIN, NF))
    x = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(384, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_pandasrolling_interleave_hvacsensors_")
    try:
        rng = np.random.default_rng(51)
        files = []
        for b in range(N_BUILDINGS):
            p = os.path.join(tmp, f"building_{b:02d}.csv")
            write_building(p, rng)
            files.append(p)
        sig = (tf.TensorSpec((WIN, NF), tf.float32), tf.TensorSpec((), tf.float32))
        ds = (tf.data.Dataset.from_tensor_slices(files)
              .interleave(lambda f: tf.data.Dataset.from_generator(windows, args=(f,), output_signature=sig),
                          cycle_length=4, block_length=4)
              .batch(BATCH))

        tf.random.set_seed(51)
        model = build_model()
        timer = StepTimer()
        t0 = time.perf_counter()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})

        if "--truth" in sys.argv:
            xb, yb = next(iter(ds.take(1)))
            tf.random.set_seed(51)
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        print(f"hvac fault model: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, "
              f"final acc {hist.history['accuracy'][-1]:.3f}, fit {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
