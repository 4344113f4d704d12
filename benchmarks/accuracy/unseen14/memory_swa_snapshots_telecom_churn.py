"""Telecom churn model; keeps per-batch weight snapshots for stochastic weight averaging."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_CUSTOMERS = 50_000
N_FEATURES = 300
BATCH_SIZE = 512
STEPS = 130
SEED = 37


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


class WeightSnapshots(keras.callbacks.Callback):
    """Collect weights after every batch; averaged at the end of training (SWA)."""

    def __init__(self):
        super().__init__()
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append(self.model.get_weights())

    def on_train_end(self, logs=None):
        tail = self.snapshots[len(self.snapshots) // 2 :]
        averaged = [np.mean(ws, axis=0) for ws in zip(*tail)]
        self.model.set_weights(averaged)


def synth_customers(rng):
    x = rng.normal(size=(N_CUSTOMERS, N_FEATURES)).astype(np.float32)
    w = rng.normal(size=N_FEATURES) / np.sqrt(N_FEATURES)
    y = (x @ w + 0.3 * rng.normal(size=N_CUSTOMERS) > 0.8).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return model


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    x, y = synth_customers(rng)
    train = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(N_CUSTOMERS, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )

    model = build_model()
    print(f"params: {model.count_params():,}, rss before fit {rss_mb():.0f} MB")
    clock = StepClock()
    swa = WeightSnapshots()
    t0 = time.perf_counter()
    hist = model.fit(train, epochs=1, steps_per_epoch=args.steps, callbacks=[clock, swa], verbose=0)
    full = clock.seconds_per_step()
    print(
        f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
        f"auc={hist.history['auc'][-1]:.3f}, snapshots={len(swa.snapshots)}, "
        f"rss after fit {rss_mb():.0f} MB"
    )
    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        del swa, model
        batch = next(iter(train))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        clock2 = StepClock()
        swa2 = WeightSnapshots()
        model2.fit(
            cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2, swa2], verbose=0
        )
        compute = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
    print(f"churn MLP: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
