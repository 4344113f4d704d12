import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


# Chess-clock records: every game in the club archive is a list of clock
# readings (seconds left for the side to move) after each move, with a
# Fischer increment.  A Python loop replays the clock for each game, derives
# per-move think time, time-trouble flags and increment usage, pads to 80
# plies and feeds a custom @tf.function GradientTape step that predicts
# whether the game was lost on time.
PLIES = 80
FEATS = 5
BATCH = 64
STEPS = 330
EPOCHS = 3


def replay_game(rng):
    base = float(rng.choice([180.0, 300.0, 600.0]))
    inc = float(rng.choice([0.0, 2.0, 3.0, 5.0]))
    n = int(rng.integers(30, PLIES + 1))
    clocks = [base, base]
    rows = []
    flagged = 0.0
    style = rng.uniform(0.5, 2.0, size=2)
    thinks = rng.exponential(1.0, size=n).tolist()
    for ply in range(n):
        side = ply % 2
        think = thinks[ply] * style[side] * (base / 60.0) * (1.5 if 10 < ply < 40 else 0.7)
        before = clocks[side]
        after = before - think
        if after <= 0:
            flagged = 1.0
            after = 0.0
        after += inc
        clocks[side] = after
        trouble = 1.0 if after < 0.1 * base else 0.0
        rows.append((f"{int(after // 60)}:{after % 60:04.1f}", f"{think:.1f}", side))
        if flagged:
            break
    return " ".join(f"{c}/{t}/{s}" for c, t, s in rows), base, inc, flagged


def parse_clock_line(line, base, inc):
    """The archive stores each ply as 'm:ss.d/think/side'; decode it."""
    feats = []
    for tok in line.split(" "):
        clock, think, side = tok.split("/")
        mins, secs = clock.split(":")
        left = int(mins) * 60 + float(secs)
        trouble = 1.0 if left < 0.1 * base else 0.0
        feats.append([left / base, float(think) / base, trouble, inc / 10.0, float(side)])
    arr = np.zeros((PLIES, FEATS), dtype=np.float32)
    arr[: len(feats)] = np.asarray(feats, dtype=np.float32)
    return arr


def make_batch(rng):
    xs = np.empty((BATCH, PLIES, FEATS), dtype=np.float32)
    ys = np.empty((BATCH, 1), dtype=np.float32)
    for i in range(BATCH):
        line, base, inc, flagged = replay_game(rng)
        xs[i] = parse_clock_line(line, base, inc)
        ys[i, 0] = flagged
    return xs, ys


def make_model():
    inp = keras.Input((PLIES, FEATS))
    x = keras.layers.Conv1D(32, 5, activation="relu", padding="same")(inp)
    x = keras.layers.Conv1D(32, 5, activation="relu", padding="same")(x)
    x = keras.layers.Conv1D(32, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def run(batch_source):
    keras.utils.set_random_seed(17)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = batch_source()
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


def main():
    rng = np.random.default_rng(29)
    full, loss = run(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print(f"chessclocks: {full * 1000:.1f} ms/step, loss {loss:.4f}, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = make_batch(np.random.default_rng(31))
        compute, _ = run(lambda: one)
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"chessclocks truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
