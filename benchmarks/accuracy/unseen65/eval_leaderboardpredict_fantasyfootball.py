"""Fantasy football: weekly player-points ranker; a callback scores the whole player-week
universe at every epoch end with model.predict and computes per-league NDCG@10.

Bottleneck (eval): training is a small MLP over a modest training set, but at each epoch end the
callback predicts a large validation universe and ranks it per league; that evaluation dominates.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6510
N_TRAIN = 8192
N_VAL = 320000
LEAGUES = 2000
FEAT = 32
BATCH = 128
EPOCHS = 3
STEPS = 40


def make_data(rng, n):
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    w = np.linspace(-1, 1, FEAT).astype(np.float32)
    y = (x @ w + 0.5 * np.sin(x[:, 0] * 3) + rng.normal(0, 0.5, n)).astype(np.float32)
    return x, y[:, None]


class LeaderboardEval(keras.callbacks.Callback):
    def __init__(self, x_val, y_val, league):
        super().__init__()
        self.x_val, self.y_val, self.league = x_val, y_val, league
        self.seconds = 0.0
        self.order = np.argsort(league, kind="stable")
        self.bounds = np.searchsorted(league[self.order], np.arange(LEAGUES + 1))

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x_val, batch_size=256, verbose=0)[:, 0]
        truth = self.y_val[:, 0]
        ndcgs = []
        for lg in range(LEAGUES):
            idx = self.order[self.bounds[lg]:self.bounds[lg + 1]]
            top = idx[np.argsort(-pred[idx])[:10]]
            ideal = idx[np.argsort(-truth[idx])[:10]]
            disc = 1.0 / np.log2(np.arange(2, 12))
            gain = lambda ids: float(np.sum((np.exp2(np.clip(truth[ids], 0, 5)) - 1) * disc[:len(ids)]))
            ndcgs.append(gain(top) / max(gain(ideal), 1e-9))
        self.seconds += time.perf_counter() - t
        self.last_ndcg = float(np.mean(ndcgs))


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    x, y = make_data(rng, N_TRAIN)
    x_val, y_val = make_data(rng, N_VAL)
    league = rng.integers(0, LEAGUES, N_VAL)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=SEED).repeat().batch(BATCH)

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    ev = LeaderboardEval(x_val, y_val, league)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, ev], verbose=0)
    full = timer.sec_per_step()
    wall = time.perf_counter() - _T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[fantasyfootball] fit {full * 1000:.1f} ms/step; leaderboard eval {ev.seconds:.1f}s of "
          f"{wall:.1f}s wall = {100 * ev.seconds / wall:.0f}% (NDCG@10 {ev.last_ndcg:.3f})")

    if args.truth:
        one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        ev2 = LeaderboardEval(x_val, y_val, league)
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2, ev2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        total = time.perf_counter() - _T0
        print(f"[fantasyfootball] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}; eval {ev.seconds + ev2.seconds:.1f}s of {total:.1f}s total wall "
              f"= {100 * (ev.seconds + ev2.seconds) / total:.0f}%")


if __name__ == "__main__":
    main()
