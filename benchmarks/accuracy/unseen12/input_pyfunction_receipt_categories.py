"""Expense category prediction from scanned-receipt text lines.

Each receipt is generated and featurized in Python (tokenize, normalize prices,
hash word and character n-grams) inside a tf.py_function applied by a serial map.

    python input_pyfunction_receipt_categories.py [--truth]
"""

import argparse
import json
import os
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

BATCH_SIZE = 64
STEPS = 150
HASH_BINS = 4096
CATEGORIES = ["groceries", "fuel", "restaurant", "pharmacy", "hardware", "electronics"]

VOCAB = {
    "groceries": ["milk", "bread", "eggs", "banana", "apples", "cheese", "yogurt", "rice"],
    "fuel": ["unleaded", "diesel", "pump", "litre", "gallon", "carwash", "octane"],
    "restaurant": ["burger", "fries", "pasta", "tip", "table", "espresso", "salad", "wine"],
    "pharmacy": ["ibuprofen", "vitamin", "bandage", "rx", "syrup", "lotion", "tablets"],
    "hardware": ["screws", "drill", "paint", "brush", "lumber", "hinge", "sandpaper"],
    "electronics": ["usb", "cable", "charger", "hdmi", "battery", "headphones", "adapter"],
}
COMMON = ["total", "subtotal", "tax", "cash", "visa", "change", "qty", "thank", "you"]


def make_receipt(index):
    rng = np.random.default_rng(int(index))
    label = int(rng.integers(len(CATEGORIES)))
    words = VOCAB[CATEGORIES[label]]
    lines = []
    for _ in range(int(rng.integers(6, 14))):
        item = " ".join(rng.choice(words, size=int(rng.integers(1, 3))))
        if rng.random() < 0.3:  # cross-category noise
            other = VOCAB[CATEGORIES[int(rng.integers(len(CATEGORIES)))]]
            item += " " + str(rng.choice(other))
        lines.append(f"{item.upper()}  {rng.integers(1, 4)} x {rng.uniform(0.5, 80):.2f}")
    lines.append(f"TOTAL {rng.uniform(5, 400):.2f} {rng.choice(COMMON).upper()}")
    return "\n".join(lines), label


def featurize(index):
    text, label = make_receipt(index.numpy())
    feats = np.zeros(HASH_BINS, dtype=np.float32)
    prices = []
    for line in text.lower().split("\n"):
        tokens = line.replace("x", " ").split()
        for tok in tokens:
            try:
                prices.append(float(tok))
                continue
            except ValueError:
                pass
            feats[zlib.crc32(tok.encode()) % HASH_BINS] += 1.0
            padded = f"#{tok}#"
            for i in range(len(padded) - 2):
                feats[zlib.crc32(padded[i : i + 3].encode()) % HASH_BINS] += 0.25
    feats = np.log1p(feats)
    if prices:
        feats[:4] = [np.log1p(max(prices)), np.log1p(np.mean(prices)), len(prices) / 20, 1.0]
    return feats, np.int32(label)


def tf_featurize(index):
    x, y = tf.py_function(featurize, [index], [tf.float32, tf.int32])
    x.set_shape([HASH_BINS])
    y.set_shape([])
    return x, y


def make_dataset(start=0):
    ds = tf.data.Dataset.range(start, start + 10_000_000)
    ds = ds.map(tf_featurize)
    return ds.batch(BATCH_SIZE, drop_remainder=True)


def build_model():
    model = keras.Sequential(
        [
            keras.Input(shape=(HASH_BINS,)),
            keras.layers.Dense(1536, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(len(CATEGORIES), activation="softmax"),
        ],
        name="receipt_mlp",
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimes(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.t = []

    def on_train_batch_end(self, batch, logs=None):
        self.t.append(time.perf_counter())


def run_training(dataset):
    keras.utils.set_random_seed(7)
    model = build_model()
    clock = StepTimes()
    hist = model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    per_step = (clock.t[-1] - clock.t[4]) / (len(clock.t) - 5)
    return per_step, hist.history


def append_result(**record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    full, hist = run_training(make_dataset())
    append_result(steps_per_second=1.0 / full)
    line = f"receipts: {STEPS} steps, {1 / full:.2f} steps/s, acc {hist['accuracy'][-1]:.3f}"
    if args.truth:
        one_batch = next(iter(make_dataset(start=5_000_000)))
        compute, _ = run_training(tf.data.Dataset.from_tensors(one_batch).repeat())
        fraction = float(np.clip((full - compute) / full, 0.0, 1.0))
        append_result(truth_input_fraction=fraction)
        line += f", truth_input_fraction {fraction:.3f}"
    print(line)


if __name__ == "__main__":
    main()
