"""Network intrusion detection: quick fit, then score a day of NetFlow records.

A small MLP is trained briefly on a labelled sample of synthetic flow records (42
features: durations, byte/packet counts, flag counts, port buckets, inter-arrival
statistics). Training data comes from an in-memory ``tf.data`` pipeline fed to
``model.fit``. The bulk of the run is the offline part: ``model.evaluate`` on a large
held-out labelled set, then ``model.predict`` over a full day of unlabelled flows to
rank the most suspicious ones.

Run ``python eval_intrusion_flow_scoring.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

N_FEATURES = 42
TRAIN_FLOWS = 40_000
HOLDOUT_FLOWS = 700_000
DAY_FLOWS = 1_000_000
BATCH = 256
STEPS = 150


def synth_flows(n, seed):
    rng = np.random.default_rng(seed)
    attack = rng.random(n) < 0.08
    x = np.exp(rng.standard_normal(size=(n, N_FEATURES), dtype=np.float32))
    x[attack, :6] *= rng.uniform(3, 8, size=(attack.sum(), 6)).astype(np.float32)
    x[attack, 20:24] = rng.poisson(12, size=(attack.sum(), 4))
    x = np.log1p(x)
    return x, attack.astype(np.float32)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((N_FEATURES,)),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dropout(0.1),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer="adam",
        loss="binary_crossentropy",
        metrics=["accuracy", keras.metrics.Precision(), keras.metrics.Recall()],
    )
    return model


class BatchClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())

    def step_seconds(self):
        return (self.ends[-1] - self.ends[4]) / (len(self.ends) - 5)


def fit(dataset):
    model = build_model()
    clock = BatchClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    return model, clock.step_seconds()


def write_json(entry):
    if "ACCURACY_OUT" in os.environ:
        with open(os.environ["ACCURACY_OUT"], "a") as f:
            f.write(json.dumps(entry) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()
    t_start = time.perf_counter()

    x_train, y_train = synth_flows(TRAIN_FLOWS, seed=0)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(TRAIN_FLOWS)
        .repeat()
        .batch(BATCH)
        .prefetch(2)
    )
    t_fit = time.perf_counter()
    model, full = fit(train_ds)
    fit_s = time.perf_counter() - t_fit
    write_json({"steps_per_second": 1 / full})

    x_hold, y_hold = synth_flows(HOLDOUT_FLOWS, seed=1)
    x_day, _ = synth_flows(DAY_FLOWS, seed=2)
    t_eval = time.perf_counter()
    results = model.evaluate(x_hold, y_hold, batch_size=256, verbose=0, return_dict=True)
    scores = model.predict(x_day, batch_size=256, verbose=0)[:, 0]
    eval_s = time.perf_counter() - t_eval
    top = np.argsort(scores)[-5:][::-1]
    print("holdout:", {k: round(float(v), 4) for k, v in results.items()})
    print("most suspicious flows:", top.tolist())

    summary = f"intrusion MLP: {1 / full:.1f} steps/s, fit {fit_s:.1f}s, eval+predict {eval_s:.1f}s"
    if args.truth:
        batch = next(iter(train_ds))
        _, compute = fit(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_json({"truth_input_fraction": frac})
        summary += f", train input fraction {frac:.3f}"
    summary += f", total {time.perf_counter() - t_start:.1f}s after imports"
    print(summary)


if __name__ == "__main__":
    main()
