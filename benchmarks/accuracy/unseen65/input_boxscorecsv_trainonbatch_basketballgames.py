"""Basketball games: home-win classifier trained with model.train_on_batch fed from Python.

Bottleneck (input): each step parses a batch of raw box-score CSV dumps (one line per player with
"MM:SS" minutes and "made-attempted" shooting splits), aggregates team totals and advanced stats
(eFG%, TS%, possessions, pace) in Python and builds the feature matrix before train_on_batch.
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

import csv
import io

SEED = 6506
N_GAMES = 512
PLAYERS = 8
BATCH = 64
STEPS = 110
FEAT = 2 * 14 + 2


def make_boxscores(rng):
    games, labels = [], []
    for g in range(N_GAMES):
        lines = ["team,player,min,fg,tp,ft,oreb,dreb,ast,stl,blk,tov,pf,pts"]
        skill = rng.normal(0, 1, 2)
        totals = [0, 0]
        for t, team in enumerate(("HOME", "AWAY")):
            for p in range(PLAYERS):
                mins = int(rng.integers(4, 40))
                fga = int(rng.integers(1, 20)); fgm = int(rng.binomial(fga, 0.42 + 0.03 * skill[t]))
                tpa = int(rng.integers(0, max(1, fga // 2) + 1)); tpm = int(rng.binomial(tpa, 0.35))
                fta = int(rng.integers(0, 9)); ftm = int(rng.binomial(fta, 0.77))
                pts = 2 * (fgm - min(tpm, fgm)) + 3 * min(tpm, fgm) + ftm
                totals[t] += pts
                lines.append("%s,P%02d_%s,%d:%02d,%d-%d,%d-%d,%d-%d,%d,%d,%d,%d,%d,%d,%d,%d" % (
                    team, p, team[:1], mins, int(rng.integers(0, 60)), fgm, fga, min(tpm, fgm), tpa, ftm, fta,
                    int(rng.integers(0, 4)), int(rng.integers(0, 9)), int(rng.integers(0, 10)),
                    int(rng.integers(0, 4)), int(rng.integers(0, 3)), int(rng.integers(0, 5)),
                    int(rng.integers(0, 6)), pts))
        games.append("\n".join(lines))
        labels.append(float(totals[0] > totals[1]))
    return games, np.array(labels, np.float32)


def parse_game(text):
    agg = {"HOME": [0.0] * 14, "AWAY": [0.0] * 14}
    for row in csv.DictReader(io.StringIO(text)):
        a = agg[row["team"]]
        mm, ss = row["min"].split(":")
        a[0] += int(mm) + int(ss) / 60.0
        for k, key in enumerate(("fg", "tp", "ft")):
            made, att = row[key].split("-")
            a[1 + 2 * k] += int(made)
            a[2 + 2 * k] += int(att)
        for k, key in enumerate(("oreb", "dreb", "ast", "stl", "blk", "tov", "pf")):
            a[7 + k] += int(row[key])
    feats = []
    poss = []
    for team in ("HOME", "AWAY"):
        a = agg[team]
        fgm, fga, tpm, tpa, ftm, fta = a[1:7]
        efg = (fgm + 0.5 * tpm) / max(fga, 1)
        pts = 2 * fgm + tpm + ftm
        ts = pts / max(2 * (fga + 0.44 * fta), 1)
        p = fga - a[7] + a[12] + 0.44 * fta
        poss.append(p)
        feats += [a[0] / 240.0, efg, ts, p / 100.0, tpa / max(fga, 1), fta / max(fga, 1)] + \
                 [v / 50.0 for v in a[7:14]] + [pts / 100.0]
    feats += [sum(poss) / 200.0, (poss[0] - poss[1]) / 20.0]
    return feats


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dense(384, activation="relu"), keras.layers.Dense(192, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(model, batches):
    stamps = []
    loss = None
    for x, y in batches():
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    games, labels = make_boxscores(np.random.default_rng(SEED))
    order = np.random.default_rng(SEED + 1).permutation(N_GAMES)

    def python_batches():
        for s in range(STEPS):
            ids = order[(s * BATCH + np.arange(BATCH)) % N_GAMES]
            yield np.asarray([parse_game(games[i]) for i in ids], np.float32), labels[ids][:, None]

    keras.utils.set_random_seed(SEED)
    full, loss = train(build_model(), python_batches)
    emit({"steps_per_second": 1.0 / full})
    print(f"[basketballgames] boxscore train_on_batch: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"loss {loss:.4f}, wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb, yb = next(python_batches())

        def same_batch():
            for _ in range(STEPS):
                yield xb, yb

        keras.utils.set_random_seed(SEED)
        comp, _ = train(build_model(), same_batch)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[basketballgames] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
