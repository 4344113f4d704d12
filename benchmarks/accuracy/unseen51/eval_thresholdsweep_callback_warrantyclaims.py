"""Warranty-claim fraud screening: a tabular claims table (repair codes, part costs,
dealer history) is generated in memory; a small MLP trains briefly, and after every
epoch a callback scores the full 1.2M-claim holdout with model.predict and sweeps 400
review thresholds to pick the one that minimises expected investigation cost.
"""
import json
import os
import sys
import time

T_PROC = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 40
EPOCHS = 3
FEAT = 48
N_HOLDOUT = 1_200_000


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


class ThresholdSweep(keras.callbacks.Callback):
    """Scores the holdout each epoch and records the cost-optimal review threshold."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds, self.best = x, y, 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.x, batch_size=1024, verbose=0)[:, 0]
        costs = []
        for th in np.linspace(0.01, 0.99, 400):
            flag = p >= th
            fp = np.sum(flag & (self.y == 0)); fn = np.sum(~flag & (self.y == 1))
            costs.append(35.0 * fp + 900.0 * fn)
        self.best.append(float(np.linspace(0.01, 0.99, 400)[int(np.argmin(costs))]))
        self.seconds += time.perf_counter() - t


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_claims(rng, n):
    x = rng.normal(0, 1, (n, FEAT)).astype(np.float32)
    logit = 1.2 * x[:, 0] - 0.8 * x[:, 3] + 0.6 * x[:, 5] * x[:, 7] - 2.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")])
    return m


def main():
    rng = np.random.default_rng(51)
    x, y = make_claims(rng, BATCH * STEPS)
    xh, yh = make_claims(rng, N_HOLDOUT)
    tf.random.set_seed(51)
    model = build_model()
    timer, sweep = StepTimer(), ThresholdSweep(xh, yh)
    t0 = time.perf_counter()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, sweep], verbose=0)
    fit_s = time.perf_counter() - t0
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    if "--truth" in sys.argv:
        tf.random.set_seed(51)
        model2 = build_model()
        timer2, sweep2 = StepTimer(), ThresholdSweep(xh, yh)
        model2.fit(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[timer2, sweep2], verbose=0)
        comp = timer2.sec_per_step()
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
    wall = time.perf_counter() - T_PROC
    evals = sweep.seconds + (sweep2.seconds if "--truth" in sys.argv else 0.0)
    print(f"warranty screening: {STEPS*EPOCHS} steps, holdout scoring {sweep.seconds:.1f}s of {fit_s:.1f}s fit, "
          f"all scoring {evals:.1f}s of {wall:.1f}s since imports ({100*evals/wall:.0f}%), "
          f"best thresholds {[round(b, 3) for b in sweep.best]}")


if __name__ == "__main__":
    main()
