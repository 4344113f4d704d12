import time
_WALL_T0 = time.perf_counter()
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


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Esports match outcome prediction from binary replay demos: the replay
# archive is split into shards; tf.data.Dataset.range(shards).interleave opens
# one from_generator per shard. Each generator walks the demo's event records
# with struct.unpack (tick, player, action, x, y), builds per-team action
# histograms, actions-per-minute and a 12x12 position heatmap in Python.
# model.fit trains an MLP on the result.
# ---------------------------------------------------------------------------
import struct

SEED = 60
N_SHARDS = 8
DEMOS_PER_SHARD = 48
N_EVENTS = 700
N_ACTIONS = 12
HEAT = 12
BATCH = 32
STEPS = 40
EPOCHS = 2
REC = struct.Struct("<IBBhh")
HEADER = struct.Struct("<4sHHI")


REC_DT = np.dtype([("tick", "<u4"), ("player", "u1"), ("action", "u1"), ("x", "<i2"), ("y", "<i2")])


def make_demo(rng):
    winner = int(rng.integers(0, 2))
    rec = np.zeros(N_EVENTS, REC_DT)
    rec["tick"] = np.cumsum(rng.integers(1, 40, N_EVENTS))
    player = rng.integers(0, 10, N_EVENTS)
    won = (player // 5) == winner
    rec["player"] = player
    rec["action"] = np.minimum(N_ACTIONS - 1, rng.poisson(3 + 2 * won))
    rec["x"] = np.clip(rng.normal(np.where(won, 90, -90), 500), -2048, 2047)
    rec["y"] = np.clip(rng.normal(0, 500, N_EVENTS), -2048, 2047)
    return HEADER.pack(b"DEM1", 3, 10, N_EVENTS) + rec.tobytes(), winner


def parse_demo(blob):
    magic, ver, n_players, n_ev = HEADER.unpack_from(blob, 0)
    assert magic == b"DEM1"
    hist = np.zeros((2, N_ACTIONS), np.float32)
    heat = np.zeros((2, HEAT, HEAT), np.float32)
    counts = [0, 0]
    last_tick = 0
    off = HEADER.size
    for _ in range(n_ev):
        tick, player, action, x, y = REC.unpack_from(blob, off)
        off += REC.size
        team = 0 if player < 5 else 1
        hist[team, action] += 1
        gx = min(HEAT - 1, max(0, (x + 2048) * HEAT // 4096))
        gy = min(HEAT - 1, max(0, (y + 2048) * HEAT // 4096))
        heat[team, gy, gx] += 1
        counts[team] += 1
        last_tick = tick
    minutes = last_tick / (64 * 60.0)
    apm = np.asarray([c / max(minutes, 1e-3) / 100.0 for c in counts], np.float32)
    return np.concatenate([np.log1p(hist).ravel(), np.log1p(heat).ravel(), apm])


FEAT = 2 * N_ACTIONS + 2 * HEAT * HEAT + 2


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    shards = [[make_demo(rng) for _ in range(DEMOS_PER_SHARD)] for _ in range(N_SHARDS)]

    def shard_gen(i):
        for blob, winner in shards[int(i)]:
            yield parse_demo(blob), np.float32(winner)

    sig = (tf.TensorSpec((FEAT,), tf.float32), tf.TensorSpec((), tf.float32))
    ds = (tf.data.Dataset.range(N_SHARDS).repeat()
          .interleave(lambda i: tf.data.Dataset.from_generator(shard_gen, args=(i,), output_signature=sig),
                      cycle_length=4, block_length=4)
          .batch(BATCH).prefetch(2))
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[input_replaydemo_interleave_esportswinner] full run: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, {len(timer.gaps)} gaps")
    if args.truth:
        xb = np.stack([parse_demo(shards[0][j % DEMOS_PER_SHARD][0]) for j in range(BATCH)])
        yb = np.asarray([shards[0][j % DEMOS_PER_SHARD][1] for j in range(BATCH)], np.float32)
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = sec_per_step(timer2.gaps)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_replaydemo_interleave_esportswinner] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
