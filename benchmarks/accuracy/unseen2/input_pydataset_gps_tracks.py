# Guesses the transport mode (walk, bike, bus, car, train) of a GPS track. A PyDataset with two
# worker threads turns each raw track (lat, lon, timestamp) into speed, acceleration, heading
# change and stop statistics with haversine distances computed point by point in Python.
import math

import keras
import numpy as np
from truth import measure, timed_fit

MODES, POINTS, BATCH = 5, 240, 64
SPEEDS = [1.4, 4.5, 8.0, 13.0, 25.0]
rng = np.random.default_rng(0)
tracks, modes = [], []
for i in range(1500):
    mode = i % MODES
    speed = np.clip(SPEEDS[mode] * (1 + 0.35 * rng.standard_normal(POINTS)), 0, None)
    if mode in (2, 4):
        speed[rng.random(POINTS) < 0.08] = 0.0
    heading = np.cumsum(rng.normal(0, 0.5 / (1 + mode), POINTS))
    dt = rng.uniform(1.0, 5.0, POINTS)
    north = np.cumsum(speed * dt * np.cos(heading)) / 111_000
    east = np.cumsum(speed * dt * np.sin(heading)) / 78_000
    tracks.append(
        [
            (48.1 + n, 11.5 + e, 1_700_000_000 + t)
            for n, e, t in zip(north, east, np.cumsum(dt), strict=True)
        ]
    )
    modes.append(mode)
modes = np.asarray(modes)


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(a))


def bearing(lat1, lon1, lat2, lon2):
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.atan2(y, x)


def track_features(track):
    speeds, turns, accels, stops = [], [], [], 0
    previous_bearing = previous_speed = None
    for (la1, lo1, t1), (la2, lo2, t2) in zip(track, track[1:], strict=False):
        distance = haversine(la1, lo1, la2, lo2)
        speed = distance / max(t2 - t1, 1e-3)
        direction = bearing(la1, lo1, la2, lo2)
        if previous_bearing is not None:
            turn = (direction - previous_bearing + math.pi) % (2 * math.pi) - math.pi
            turns.append(abs(turn))
            accels.append((speed - previous_speed) / max(t2 - t1, 1e-3))
        stops += speed < 0.5
        speeds.append(speed)
        previous_bearing, previous_speed = direction, speed
    speeds, turns, accels = np.asarray(speeds), np.asarray(turns), np.asarray(accels)
    hist_speed = np.histogram(speeds, bins=16, range=(0, 40))[0] / len(speeds)
    hist_turn = np.histogram(turns, bins=8, range=(0, math.pi))[0] / len(turns)
    stats = [
        speeds.mean() / 20,
        speeds.std() / 20,
        np.percentile(speeds, 95) / 30,
        np.abs(accels).mean(),
        accels.std(),
        turns.mean(),
        stops / len(speeds),
        (track[-1][2] - track[0][2]) / 1000,
    ]
    return np.concatenate([hist_speed, hist_turn, stats]).astype(np.float32)


class Tracks(keras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(workers=2, use_multiprocessing=False, **kwargs)
        self.order = np.random.default_rng(1).permutation(len(tracks))

    def __len__(self):
        return 10_000

    def __getitem__(self, index):
        start = (index * BATCH) % (len(tracks) - BATCH)
        chosen = self.order[start : start + BATCH]
        x = np.stack([track_features(tracks[i]) for i in chosen])
        return x, modes[chosen]


model = keras.Sequential(
    [
        keras.Input((32,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(MODES),
    ]
)
model.compile(
    keras.optimizers.Adam(3e-4),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(Tracks(), steps_per_epoch=3, verbose=0)
timed_fit(model, Tracks(), 300)
measure(model, Tracks, 30)
