# Classifies mineral samples from Raman spectra exported by the instrument as one text file
# per measurement (a few "key: value" header lines, then "shift intensity dark" rows). tf.data
# lists the files and parses each one with string ops, baseline-corrects and normalises it.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

POINTS, MINERALS = 1200, 8
folder = tempfile.mkdtemp(prefix="raman-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
shift = np.linspace(100.0, 1800.0, POINTS)
peaks = rng.uniform(200, 1700, (MINERALS, 4))
for i in range(900):
    mineral = i % MINERALS
    signal = sum(
        rng.uniform(0.5, 1.5) * np.exp(-((shift - p - rng.normal(0, 4)) ** 2) / 60.0)
        for p in peaks[mineral]
    )
    baseline = rng.uniform(0.2, 1.0) + rng.uniform(0, 4e-4) * shift
    dark = rng.normal(300, 5, POINTS)
    intensity = 1000 * (signal + baseline) + dark + rng.normal(0, 20, POINTS)
    header = (
        f"# instrument: RX-{rng.integers(1, 4)}\n# laser_nm: 785\n"
        f"# exposure_s: {rng.uniform(0.5, 3):.2f}\n# sample: S{i:05d}\n"
    )
    rows = "\n".join(
        f"{s:.2f}\t{v:.1f}\t{d:.1f}" for s, v, d in zip(shift, intensity, dark, strict=True)
    )
    with open(os.path.join(folder, f"S{i:05d}_m{mineral}.txt"), "w") as fh:
        fh.write(header + rows + "\n")


def parse(path):
    text = tf.io.read_file(path)
    lines = tf.strings.split(tf.strings.strip(text), "\n")
    rows = tf.boolean_mask(lines, tf.logical_not(tf.strings.regex_full_match(lines, "#.*")))
    columns = tf.strings.split(rows, "\t").to_tensor(shape=[POINTS, 3])
    values = tf.strings.to_number(columns)
    intensity = values[:, 1] - values[:, 2]
    # rolling-minimum baseline, smoothed, then removed
    window = tf.reshape(intensity, [1, POINTS, 1])
    low = -tf.nn.max_pool1d(-window, 61, 1, "SAME")
    low = tf.nn.avg_pool1d(low, 61, 1, "SAME")
    corrected = tf.reshape(window - low, [POINTS])
    corrected = corrected / (tf.reduce_max(corrected) + 1e-6)
    derivative = tf.concat([[0.0], corrected[1:] - corrected[:-1]], 0)
    features = tf.stack([corrected, 10.0 * derivative], axis=-1)
    mineral = tf.strings.regex_replace(path, r".*_m(\d+)\.txt$", r"\1")
    return features, tf.strings.to_number(mineral, tf.int32)


def dataset():
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.txt"), shuffle=True, seed=1)
    return files.repeat().map(parse).batch(64)


model = keras.Sequential(
    [
        keras.Input((POINTS, 2)),
        keras.layers.Conv1D(16, 9, strides=4, activation="relu"),
        keras.layers.Conv1D(32, 5, strides=2, activation="relu"),
        keras.layers.Conv1D(48, 5, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(MINERALS),
    ]
)
model.compile(
    "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
)
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 700)
measure(model, dataset, 30)
