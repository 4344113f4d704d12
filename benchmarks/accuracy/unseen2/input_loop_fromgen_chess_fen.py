# Learns to estimate the material balance of chess positions given as FEN strings. A Python
# generator parses each FEN into piece planes plus per-square attack counts (sliding rays
# walked in Python); tf.data.Dataset.from_generator batches and prefetches it for the loop.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

PIECES = "PNBRQKpnbrqk"
VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0}
RAYS = {
    "b": [(1, 1), (1, -1), (-1, 1), (-1, -1)],
    "r": [(1, 0), (-1, 0), (0, 1), (0, -1)],
}
RAYS["q"] = RAYS["b"] + RAYS["r"]
KNIGHT = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
KING = RAYS["q"]
FEATURES = 12 * 64 + 2 * 64 + 4


def random_fen(rng):
    board = [[None] * 8 for _ in range(8)]
    squares = rng.permutation(64)
    used = 0
    for piece, count in zip("KkQqRrBbNnPp", [1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 8, 8], strict=True):
        for _ in range(count if piece in "Kk" else rng.integers(0, count + 1)):
            square = squares[used]
            used += 1
            board[square // 8][square % 8] = piece
    rows = []
    for rank in board:
        row, empty = "", 0
        for cell in rank:
            if cell is None:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            row += cell
        rows.append(row + (str(empty) if empty else ""))
    side = "w" if rng.random() < 0.5 else "b"
    return "/".join(rows) + f" {side} - - 0 {rng.integers(1, 60)}"


def parse_fen(fen):
    placement, side, _, _, _, move = fen.split()
    board = {}
    for r, row in enumerate(placement.split("/")):
        c = 0
        for ch in row:
            if ch.isdigit():
                c += int(ch)
            else:
                board[(r, c)] = ch
                c += 1
    planes = np.zeros((12, 8, 8), np.float32)
    attacks = np.zeros((2, 8, 8), np.float32)
    for (r, c), piece in board.items():
        planes[PIECES.index(piece), r, c] = 1.0
        colour = 0 if piece.isupper() else 1
        kind = piece.lower()
        if kind == "p":
            dr = -1 if colour == 0 else 1
            targets = [(r + dr, c - 1), (r + dr, c + 1)]
        elif kind == "n":
            targets = [(r + a, c + b) for a, b in KNIGHT]
        elif kind == "k":
            targets = [(r + a, c + b) for a, b in KING]
        else:
            targets = []
            for a, b in RAYS[kind]:
                rr, cc = r + a, c + b
                while 0 <= rr < 8 and 0 <= cc < 8:
                    targets.append((rr, cc))
                    if (rr, cc) in board:
                        break
                    rr, cc = rr + a, cc + b
        for rr, cc in targets:
            if 0 <= rr < 8 and 0 <= cc < 8:
                attacks[colour, rr, cc] += 1.0
    balance = sum(VALUES[p.lower()] * (1 if p.isupper() else -1) for p in board.values())
    extra = [side == "w", int(move) / 60.0, len(board) / 32.0, attacks[0].sum() / 100.0]
    features = np.concatenate([planes.ravel(), attacks.ravel() / 4.0, np.float32(extra)])
    return features, np.float32(balance / 10.0)


def positions():
    rng = np.random.default_rng(0)
    while True:
        yield parse_fen(random_fen(rng))


def dataset():
    signature = (tf.TensorSpec((FEATURES,), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.from_generator(positions, output_signature=signature)
    return ds.batch(128).prefetch(tf.data.AUTOTUNE)


model = keras.Sequential(
    [
        keras.Input((FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ]
)
optimizer = keras.optimizers.Adam(5e-4)
loss_fn = keras.losses.Huber()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y[:, None], model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


def train(data, steps, skip=0):
    """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
    step = 0
    for x, y in data:
        if step == skip:
            start = time.perf_counter()
        if step == steps:
            break
        loss = train_step(x, y)
        step += 1
    print(f"loss after {steps} steps: {float(loss):.4f}")
    return (time.perf_counter() - start) / (steps - skip)


train(dataset(), 3)
report(steps_per_second=1 / train(dataset(), 400))
if TRUTH:
    cached = tf.data.Dataset.from_tensors(next(iter(dataset()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(train(dataset(), 30, SKIP_STEPS))
        compute.append(train(cached, 30, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
