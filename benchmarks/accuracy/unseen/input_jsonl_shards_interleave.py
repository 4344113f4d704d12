# Sensor events exported as many small JSON-lines files. tf.data interleaves the files,
# each line is decoded with json in a tf.py_function (event fields -> feature vector),
# and a small regression model predicts the next reading.
import atexit
import json
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

READINGS = 48
FEATURES = (READINGS - 1) + (READINGS - 2) + 4 + 5
folder = tempfile.mkdtemp(prefix="events-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
for shard in range(240):
    with open(os.path.join(folder, f"events-{shard:04d}.jsonl"), "w") as fh:
        for _ in range(40):
            base = rng.normal(20, 5)
            event = {
                "device": f"dev-{rng.integers(500):03d}",
                "site": ["north", "south", "east", "west"][rng.integers(4)],
                "firmware": f"1.{rng.integers(9)}.{rng.integers(20)}",
                "readings": [round(float(base + rng.normal(0, 1)), 3) for _ in range(READINGS)],
                "battery": round(float(rng.uniform(0, 1)), 3),
                "tags": {"indoor": bool(rng.integers(2)), "floor": int(rng.integers(12))},
            }
            fh.write(json.dumps(event) + "\n")
files = sorted(os.path.join(folder, name) for name in os.listdir(folder))
SITES = {"north": 0, "south": 1, "east": 2, "west": 3}


def decode(line):
    event = json.loads(line.numpy().decode())
    readings = np.asarray(event["readings"], np.float32)
    diffs = np.diff(readings[:-1])
    site = np.zeros(4, np.float32)
    site[SITES[event["site"]]] = 1.0
    major, minor, patch = (int(p) for p in event["firmware"].split("."))
    extra = [
        event["battery"],
        float(event["tags"]["indoor"]),
        event["tags"]["floor"] / 11.0,
        (major * 100 + minor * 10 + patch) / 200.0,
        int(event["device"].split("-")[1]) / 500.0,
    ]
    features = np.concatenate([readings[:-1] - readings[:-1].mean(), diffs, site, extra])
    return features.astype(np.float32), np.float32(readings[-1] - readings[:-1].mean())


def parse(line):
    x, y = tf.py_function(decode, [line], (tf.float32, tf.float32))
    x.set_shape((FEATURES,))
    y.set_shape(())
    return x, y


def dataset():
    return (
        tf.data.Dataset.from_tensor_slices(files)
        .shuffle(len(files), seed=1)
        .repeat()
        .interleave(tf.data.TextLineDataset, cycle_length=8, block_length=4)
        .map(parse)
        .batch(128)
    )


model = keras.Sequential(
    [
        keras.Input((FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile(keras.optimizers.Adam(1e-3), "mse")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 300)
measure(model, dataset, 30)
