# Learns to guess how far apart two cells of a random grid maze are (in moves, around walls).
# A plain Python generator draws each maze, solves it with a breadth-first search in pure
# Python to get the label, and yields batches straight to model.fit.
import collections
import random

import keras
import numpy as np
from truth import measure, timed_fit

SIDE, BATCH = 28, 64
MOVES = ((1, 0), (-1, 0), (0, 1), (0, -1))


def shortest_path(walls, start, goal):
    seen = {start: 0}
    queue = collections.deque([start])
    while queue:
        r, c = queue.popleft()
        if (r, c) == goal:
            return seen[(r, c)]
        for dr, dc in MOVES:
            nr, nc = r + dr, c + dc
            if 0 <= nr < SIDE and 0 <= nc < SIDE and not walls[nr][nc] and (nr, nc) not in seen:
                seen[(nr, nc)] = seen[(r, c)] + 1
                queue.append((nr, nc))
    return None


def maze(rnd):
    density = rnd.uniform(0.15, 0.32)
    walls = [[rnd.random() < density for _ in range(SIDE)] for _ in range(SIDE)]
    free = [(r, c) for r in range(SIDE) for c in range(SIDE) if not walls[r][c]]
    start, goal = rnd.sample(free, 2)
    return walls, start, goal


def batches(seed=0):
    rnd = random.Random(seed)
    while True:
        x = np.zeros((BATCH, SIDE, SIDE, 3), np.float32)
        y = np.zeros((BATCH, 2), np.float32)
        for i in range(BATCH):
            walls, start, goal = maze(rnd)
            distance = shortest_path(walls, start, goal)
            x[i, :, :, 0] = walls
            x[i, start[0], start[1], 1] = 1.0
            x[i, goal[0], goal[1], 2] = 1.0
            y[i] = (0.0, 0.0) if distance is None else (1.0, distance / (2 * SIDE))
        yield x, y


inputs = keras.Input((SIDE, SIDE, 3))
h = inputs
for filters in (32, 64, 96):
    h = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
h = keras.layers.Flatten()(h)
h = keras.layers.Dense(256, activation="relu")(h)
model = keras.Model(inputs, keras.layers.Dense(2)(h))
model.compile(keras.optimizers.Adam(1e-3), "mse")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(1), 250)
measure(model, batches, 30)
