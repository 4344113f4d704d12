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


# Board-game move logs: the online draughts/chess-variant server exports each
# finished game as a text line of moves ("c3-d4 f6-e5 d4xf6 ...").  A Python
# loop tokenises each log (square pairs -> ids, capture flags), pads to 96
# moves and pushes the batch through model.train_on_batch to predict which
# side won.
MAX_MOVES = 96
VOCAB = 64 * 64 + 2
BATCH = 64
STEPS = 110
EPOCHS = 3
FILES = "abcdefgh"


def random_log(rng):
    n = int(rng.integers(20, 140))
    toks = []
    for _ in range(n):
        a = f"{FILES[rng.integers(0, 8)]}{rng.integers(1, 9)}"
        b = f"{FILES[rng.integers(0, 8)]}{rng.integers(1, 9)}"
        toks.append(a + ("x" if rng.random() < 0.2 else "-") + b)
    return " ".join(toks)


def square_id(sq):
    return FILES.index(sq[0]) * 8 + int(sq[1]) - 1


def tokenise(log):
    ids = []
    caps_white = caps_black = 0
    for ply, mv in enumerate(log.split(" ")):
        capture = "x" in mv
        src, dst = mv.replace("x", "-").split("-")
        ids.append(2 + square_id(src) * 64 + square_id(dst))
        if capture:
            if ply % 2 == 0:
                caps_white += 1
            else:
                caps_black += 1
    ids = ids[:MAX_MOVES] + [0] * max(0, MAX_MOVES - len(ids))
    return ids, float(caps_white >= caps_black)


def make_batch(rng):
    xs = np.zeros((BATCH, MAX_MOVES), dtype=np.int32)
    ys = np.zeros((BATCH, 1), dtype=np.float32)
    for i in range(BATCH):
        ids, y = tokenise(random_log(rng))
        xs[i] = ids
        ys[i, 0] = y
    return xs, ys


def make_model():
    inp = keras.Input((MAX_MOVES,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 48)(inp)
    x = keras.layers.Conv1D(96, 5, activation="relu", padding="same")(x)
    x = keras.layers.Conv1D(96, 5, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(batch_source):
    keras.utils.set_random_seed(23)
    model = make_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = batch_source()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


def main():
    rng = np.random.default_rng(37)
    full, loss = run(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print(f"boardgamemoves: {full * 1000:.1f} ms/step, loss {loss:.4f}, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = make_batch(np.random.default_rng(41))
        compute, _ = run(lambda: one)
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"boardgamemoves truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
