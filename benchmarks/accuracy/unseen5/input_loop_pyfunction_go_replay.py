# Trains a small policy network for the game of Go: given a 19x19 position, predict the next
# move. The games are kept as SGF move strings (";B[pd];W[dd];..."). A tf.py_function in the
# tf.data pipeline parses a game, replays it in Python up to a random move (placing stones,
# flood-filling neighbouring groups to find captures and liberties, trying each empty point
# next to a stone for self-atari) and returns feature planes; a hand-written loop with a
# tf.function step does the training.
import argparse
import statistics
import string
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

SIZE, PLANES, BATCH, GAMES = 19, 9, 48, 3000
LETTERS = string.ascii_lowercase[:SIZE]


def make_games(seed=0):
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(GAMES):
        moves = int(rng.integers(120, 260))
        centre = rng.normal(9, 6, (moves, 2)).round().clip(0, SIZE - 1).astype(int)
        games.append(
            "".join(f";{'BW'[i % 2]}[{LETTERS[c]}{LETTERS[r]}]" for i, (c, r) in enumerate(centre))
        )
    return games


def neighbours(p):
    r, c = divmod(p, SIZE)
    if r > 0:
        yield p - SIZE
    if r < SIZE - 1:
        yield p + SIZE
    if c > 0:
        yield p - 1
    if c < SIZE - 1:
        yield p + 1


def group(board, p):
    colour, stones, liberties, todo = board[p], {p}, set(), [p]
    while todo:
        q = todo.pop()
        for n in neighbours(q):
            if board[n] == 0:
                liberties.add(n)
            elif board[n] == colour and n not in stones:
                stones.add(n)
                todo.append(n)
    return stones, liberties


def replay(sgf, seed):
    moves = [
        (1 if m[0] == "B" else 2, LETTERS.index(m[3]) * SIZE + LETTERS.index(m[2]))
        for m in sgf.numpy().decode().split(";")[1:]
    ]
    rnd = np.random.default_rng(int(seed.numpy()))
    stop = int(rnd.integers(10, len(moves) - 1))
    board = [0] * (SIZE * SIZE)
    last = -1
    for colour, p in moves[:stop]:
        if board[p]:
            continue
        board[p] = colour
        for n in neighbours(p):
            if board[n] == 3 - colour:
                stones, liberties = group(board, n)
                if not liberties:
                    for s in stones:
                        board[s] = 0
        last = p
    to_play, target = moves[stop]
    planes = np.zeros((SIZE * SIZE, PLANES), np.float32)
    seen = set()
    for p in range(SIZE * SIZE):
        if board[p] == 0:
            planes[p, 2] = 1
            continue
        planes[p, 0 if board[p] == to_play else 1] = 1
        if p in seen:
            continue
        stones, liberties = group(board, p)
        seen |= stones
        lib = min(len(liberties), 3)
        for s in stones:
            planes[s, 2 + lib] = 1
    for p in range(SIZE * SIZE):  # moves that would leave the new stone in atari
        if board[p] == 0 and any(board[n] for n in neighbours(p)):
            board[p] = to_play
            if len(group(board, p)[1]) == 1:
                planes[p, 8] = 1
            board[p] = 0
    if last >= 0:
        planes[last, 6] = 1
    planes[:, 7] = 1.0 if to_play == 1 else 0.0
    return planes.reshape(SIZE, SIZE, PLANES), np.int32(target)


def positions(games, seed=0):
    def load(sgf, index):
        planes, target = tf.py_function(replay, [sgf, index], [tf.float32, tf.int32])
        planes.set_shape((SIZE, SIZE, PLANES))
        target.set_shape(())
        return planes, target

    return (
        tf.data.Dataset.from_tensor_slices(games)
        .shuffle(GAMES, seed=seed)
        .repeat()
        .enumerate()
        .map(lambda i, sgf: load(sgf, i + seed * 1_000_000))
        .batch(BATCH)
        .prefetch(1)
    )


def build_model():
    inputs = keras.Input((SIZE, SIZE, PLANES))
    h = keras.layers.Conv2D(32, 5, padding="same", activation="relu")(inputs)
    for _ in range(3):
        h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    logits = keras.layers.Flatten()(keras.layers.Conv2D(1, 1)(h))
    return keras.Model(inputs, logits)


model = build_model()
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(planes, moves):
    with tf.GradientTape() as tape:
        logits = model(planes, training=True)
        loss = loss_fn(moves, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    accuracy.update_state(moves, logits)
    return loss


def train(data, steps, skip=0):
    """Trains ``steps`` steps; returns seconds per step from step ``skip`` on."""
    accuracy.reset_state()
    batches = iter(data)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        planes, moves = next(batches)
        loss = train_step(planes, moves)
    print(f"loss {float(loss):.3f} move accuracy {float(accuracy.result()):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=240)
    args = parser.parse_args()
    games = make_games()

    train(positions(games, 1), 3)
    report(steps_per_second=1 / train(positions(games), args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(positions(games, 2)))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(positions(games, 3), args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
