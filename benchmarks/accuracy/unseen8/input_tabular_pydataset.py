"""Click-through style tabular model fed by a keras.utils.PyDataset.

The dataset holds raw CSV lines; every batch is parsed in Python
(timestamps with strptime, categorical vocab lookups, missing-value
imputation, log transforms) inside __getitem__. One worker, no
multiprocessing. Trained with model.fit, steps_per_execution=4 and a
validation PyDataset.
"""

import argparse
import datetime as dt
import json
import math
import os
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 256
EPOCHS = 8
SPE = 4  # steps_per_execution
N_NUM = 16
CATS = {
    "device": ["mobile", "desktop", "tablet", "tv"],
    "country": ["us", "de", "fr", "br", "in", "jp", "gb", "ca", "mx", "es"],
    "browser": ["chrome", "firefox", "safari", "edge", "opera"],
    "channel": ["organic", "ads", "email", "social", "referral", "direct"],
}


def synth_csv(n, seed):
    rng = np.random.default_rng(seed)
    base = dt.datetime(2024, 1, 1)
    lines = []
    for i in range(n):
        ts = base + dt.timedelta(seconds=int(rng.integers(0, 365 * 86400)))
        cats = [str(rng.choice(v)) for v in CATS.values()]
        nums = rng.lognormal(0.0, 1.0, N_NUM)
        fields = [f"{v:.4f}" if rng.random() > 0.05 else "" for v in nums]
        score = nums[0] - nums[3] + (cats[0] == "mobile") + 0.5 * (ts.hour > 18)
        label = int(score + rng.normal(0, 0.5) > 1.0)
        lines.append(
            ",".join([str(i), ts.strftime("%Y-%m-%d %H:%M:%S")] + cats + fields + [str(label)])
        )
    return lines


class ClickData(keras.utils.PyDataset):
    def __init__(self, lines, batch_size, shuffle=True, **kwargs):
        super().__init__(**kwargs)
        self.lines = lines
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.order = np.arange(len(lines))
        self.vocab = {k: {v: i for i, v in enumerate(vals)} for k, vals in CATS.items()}
        self.medians = [1.0] * N_NUM
        self.on_epoch_end()

    def __len__(self):
        return len(self.lines) // self.batch_size

    def on_epoch_end(self):
        if self.shuffle:
            np.random.shuffle(self.order)

    def parse(self, line):
        parts = line.strip().split(",")
        ts = dt.datetime.strptime(parts[1], "%Y-%m-%d %H:%M:%S")
        feats = [
            math.sin(2 * math.pi * ts.hour / 24),
            math.cos(2 * math.pi * ts.hour / 24),
            math.sin(2 * math.pi * ts.weekday() / 7),
            math.cos(2 * math.pi * ts.weekday() / 7),
            ts.month / 12.0,
        ]
        for j, vocab in enumerate(self.vocab.values()):
            onehot = [0.0] * len(vocab)
            onehot[vocab.get(parts[2 + j], 0)] = 1.0
            feats.extend(onehot)
        for j, raw in enumerate(parts[6 : 6 + N_NUM]):
            missing = raw == ""
            v = self.medians[j] if missing else float(raw)
            feats.append(math.log1p(min(v, 50.0)))
            feats.append(1.0 if missing else 0.0)
        return feats, float(parts[-1])

    def __getitem__(self, idx):
        rows = self.order[idx * self.batch_size : (idx + 1) * self.batch_size]
        xs, ys = [], []
        for r in rows:
            f, y = self.parse(self.lines[r])
            xs.append(f)
            ys.append(y)
        return np.asarray(xs, dtype=np.float32), np.asarray(ys, dtype=np.float32)


def build_model(n_features):
    inputs = keras.Input((n_features,))
    h = keras.layers.Dense(384, activation="relu")(inputs)
    h = keras.layers.Dropout(0.2)(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    model = keras.Model(inputs, out)
    model.compile(
        optimizer="adam",
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
        steps_per_execution=SPE,
    )
    return model


class ExecTimer(keras.callbacks.Callback):
    """Records wall time of each execution (SPE steps) inside epochs."""

    def __init__(self):
        super().__init__()
        self.spans = []

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.spans.append(now - self.t0)
        self.t0 = now

    def per_step(self):
        skip = math.ceil(5 / SPE)
        spans = self.spans[skip:]
        return sum(spans) / (len(spans) * SPE), len(spans) * SPE, sum(spans)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--truth", action="store_true", help="also measure true input fraction")
    args = ap.parse_args()

    train_lines = synth_csv(40000, 0)
    val_lines = synth_csv(2048, 1)
    train = ClickData(train_lines, BATCH, workers=1, use_multiprocessing=False)
    val = ClickData(val_lines, BATCH, shuffle=False, workers=1, use_multiprocessing=False)
    n_features = train[0][0].shape[1]
    model = build_model(n_features)

    timer = ExecTimer()
    model.fit(train, validation_data=val, epochs=EPOCHS, callbacks=[timer], verbose=2)
    full, n_steps, secs = timer.per_step()
    sps = n_steps / secs
    print(f"steps/s = {sps:.2f}")
    if os.environ.get("ACCURACY_OUT"):
        with open(os.environ["ACCURACY_OUT"], "a") as f:
            print(json.dumps({"steps_per_second": sps}), file=f)

    if args.truth:
        x0, y0 = train[0]
        cached = tf.data.Dataset.from_tensors((x0, y0)).repeat()
        timer2 = ExecTimer()
        model.fit(cached, steps_per_epoch=len(train), epochs=EPOCHS, callbacks=[timer2], verbose=0)
        compute, _, _ = timer2.per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth: input fraction {frac:.3f}  full={full * 1e3:.2f}ms compute={compute * 1e3:.2f}ms"
        )
        if os.environ.get("ACCURACY_OUT"):
            with open(os.environ["ACCURACY_OUT"], "a") as f:
                print(json.dumps({"truth_input_fraction": frac}), file=f)


if __name__ == "__main__":
    main()
