# Fabric defect detection on random 96x96 crops of larger loom-camera frames. To "speed up
# the loader" the crop function is memoised with functools.cache (unbounded), but its key
# includes the random crop offsets, so it almost never hits: every crop ever made stays
# in the cache and host memory grows with every batch (about 7 MB per step).
# Memory budget a user would give this job: 4 GiB.
import functools
import random

import keras
import numpy as np

FRAME, CROP, BATCH = 256, 96, 64
rng = np.random.default_rng(0)
frames = rng.integers(90, 160, (500, FRAME, FRAME, 3), dtype=np.uint8)
defective = rng.random(500) < 0.5
for i in np.flatnonzero(defective):  # a broken thread: a dark line across the frame
    row = rng.integers(0, FRAME)
    frames[i, max(row - 2, 0) : row + 2, :, :] //= 3


@functools.cache
def crop(frame_id, top, left):
    patch = frames[frame_id, top : top + CROP, left : left + CROP].astype(np.float32)
    return (patch - 125.0) / 40.0


def batches(seed=0):
    rnd = random.Random(seed)
    while True:
        ids = [rnd.randrange(len(frames)) for _ in range(BATCH)]
        x = np.stack(
            [crop(i, rnd.randrange(FRAME - CROP), rnd.randrange(FRAME - CROP)) for i in ids]
        )
        yield x, defective[ids].astype(np.float32)


model = keras.Sequential(
    [
        keras.Input((CROP, CROP, 3)),
        keras.layers.Conv2D(16, 5, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalMaxPooling2D(),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(batches(), steps_per_epoch=110, epochs=3, verbose=2)
print("cached crops:", crop.cache_info())
