"""Imitation learning of a gridworld navigator from an ever-growing replay buffer."""

import keras
import numpy as np

SIZE, FRAMES, BATCH, NEW_PER_STEP = 48, 4, 64, 32
MOVES = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])


class GridWorld:
    def __init__(self, rng):
        self.rng = rng
        self.walls = rng.random((SIZE, SIZE)) < 0.12
        self.reset()

    def reset(self):
        free = np.argwhere(~self.walls)
        self.agent, self.goal = free[self.rng.choice(len(free), 2, replace=False)]
        self.history = [self.render()] * FRAMES

    def render(self):
        frame = np.zeros((SIZE, SIZE, 3), np.float32)
        frame[..., 0] = self.walls
        frame[self.agent[0], self.agent[1], 1] = 1.0
        frame[self.goal[0], self.goal[1], 2] = 1.0
        return frame

    def expert_action(self):
        delta = self.goal - self.agent
        axis = int(abs(delta[1]) > abs(delta[0]))
        return 2 * axis + int(delta[axis] > 0)

    def step(self, action):
        target = np.clip(self.agent + MOVES[action], 0, SIZE - 1)
        if not self.walls[target[0], target[1]]:
            self.agent = target
        self.history = self.history[1:] + [self.render()]
        if (self.agent == self.goal).all():
            self.reset()


def experience(seed=0):
    rng = np.random.default_rng(seed)
    worlds = [GridWorld(rng) for _ in range(8)]
    replay = []
    while True:
        for _ in range(NEW_PER_STEP):
            world = worlds[rng.integers(len(worlds))]
            action = world.expert_action()
            replay.append((np.concatenate(world.history, axis=-1), action))
            world.step(action if rng.random() > 0.2 else int(rng.integers(4)))
        picked = rng.integers(0, len(replay), BATCH)
        yield (
            np.stack([replay[i][0] for i in picked]),
            np.array([replay[i][1] for i in picked], np.int32),
        )


model = keras.Sequential(
    [
        keras.Input((SIZE, SIZE, 3 * FRAMES)),
        keras.layers.Conv2D(32, 5, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(4, activation="softmax"),
    ]
)
model.compile(keras.optimizers.Adam(3e-4), "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(experience(), steps_per_epoch=100, epochs=3, verbose=2)
