"""Readmission risk from (synthetic) electronic health records: short fit, heavy scoring.

A quick fine-tune of an MLP over labs/vitals/diagnosis-code features on a small labelled cohort,
then model.evaluate on a large held-out cohort and model.predict over the whole patient
population (the actual job: nightly risk scoring). Batch 64 for training, 512 for scoring.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

N_LABS = 40
N_CODES = 300
N_TRAIN = 3200
N_EVAL = 180_000
N_SCORE = 180_000
BATCH = 64
EPOCHS = 1


def synth_records(rng, n):
    age = rng.uniform(18, 95, n)
    labs = rng.normal(0, 1, (n, N_LABS)) + (age[:, None] - 55) / 40
    codes = (rng.random((n, N_CODES), dtype=np.float32) < 0.02 + 0.0005 * age[:, None]).astype(
        np.float32
    )
    risk = 0.04 * (age - 55) + labs[:, :5].sum(1) * 0.3 + codes[:, :20].sum(1) * 0.4
    y = (risk + rng.normal(0, 1, n) > 1.0).astype(np.float32)
    x = np.concatenate([labs, codes, (age[:, None] - 55) / 20], axis=1).astype(np.float32)
    return x, y


def build_model(n_in):
    model = keras.Sequential(
        [
            keras.Input((n_in,)),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(384, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        keras.optimizers.Adam(1e-3),
        "binary_crossentropy",
        metrics=["AUC", keras.metrics.Precision(), keras.metrics.Recall()],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self, skip=5):
        super().__init__()
        self.skip, self.count, self.t_skip = skip, 0, None

    def on_train_batch_end(self, batch, logs=None):
        self.count += 1
        self.t_end = time.perf_counter()
        if self.count == self.skip:
            self.t_skip = self.t_end

    def sec_per_step(self):
        return (self.t_end - self.t_skip) / (self.count - self.skip)


def log_json(**kw):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(kw) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    rng = np.random.default_rng(2024)
    x_tr, y_tr = synth_records(rng, N_TRAIN)
    x_ev, y_ev = synth_records(rng, N_EVAL)
    x_all, _ = synth_records(rng, N_SCORE)

    model = build_model(x_tr.shape[1])
    clock = StepClock()
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr, batch_size=BATCH, epochs=EPOCHS, callbacks=[clock], verbose=2)
    t_fit = time.perf_counter() - t0
    full = clock.sec_per_step()
    log_json(steps_per_second=1.0 / full)

    t0 = time.perf_counter()
    results = model.evaluate(x_ev, y_ev, batch_size=512, return_dict=True, verbose=0)
    t_eval = time.perf_counter() - t0
    print("held-out:", {k: round(float(v), 4) for k, v in results.items()})
    t0 = time.perf_counter()
    scores = model.predict(x_all, batch_size=512, verbose=0)
    t_pred = time.perf_counter() - t0
    print(f"flagged {int((scores > 0.5).sum())} of {len(scores)} patients")
    print(
        f"fit {t_fit:.1f}s ({1.0 / full:.1f} steps/s), evaluate {t_eval:.1f}s, "
        f"predict {t_pred:.1f}s"
    )

    if args.truth:
        one = tf.data.Dataset.from_tensors((x_tr[:BATCH], y_tr[:BATCH])).repeat()
        model2 = build_model(x_tr.shape[1])
        clock2 = StepClock()
        model2.fit(
            one, steps_per_epoch=N_TRAIN // BATCH, epochs=EPOCHS, callbacks=[clock2], verbose=0
        )
        compute = clock2.sec_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        log_json(truth_input_fraction=frac)
        print(f"truth (training step) input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
