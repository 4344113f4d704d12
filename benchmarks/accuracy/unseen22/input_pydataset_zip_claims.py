"""Insurance claim fraud scoring from a zip archive of per-claim JSON documents."""

import argparse
import json
import math
import os
import shutil
import tempfile
import time
import zipfile

import numpy as np
import keras
import tensorflow as tf

NUM_CLAIMS = 10000
NUM_FEATURES = 48
TEXT_VOCAB = 512
BATCH = 64
STEPS = 150
CATEGORIES = ["auto", "home", "travel", "health", "pet", "marine"]


def write_archive(path, n, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(TEXT_VOCAB)]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(n):
            claim = {
                "claim_id": f"C{i:07d}",
                "category": CATEGORIES[int(rng.integers(len(CATEGORIES)))],
                "amount": float(rng.gamma(2.0, 1500.0)),
                "policy_age_days": int(rng.integers(1, 4000)),
                "prior_claims": int(rng.poisson(0.7)),
                "items": [
                    {"code": int(rng.integers(1000)), "cost": float(rng.gamma(1.5, 200.0))}
                    for _ in range(int(rng.integers(1, 12)))
                ],
                "notes": " ".join(rng.choice(words, size=int(rng.integers(20, 80)))),
                "fraud": int(rng.random() < 0.1),
            }
            zf.writestr(f"claims/{i // 500:03d}/{claim['claim_id']}.json", json.dumps(claim))


def featurize(claim):
    f = np.zeros(NUM_FEATURES + TEXT_VOCAB, dtype=np.float32)
    f[CATEGORIES.index(claim["category"])] = 1.0
    f[6] = math.log1p(claim["amount"])
    f[7] = claim["policy_age_days"] / 4000.0
    f[8] = claim["prior_claims"]
    costs = [it["cost"] for it in claim["items"]]
    f[9] = len(costs)
    f[10] = math.log1p(sum(costs))
    f[11] = math.log1p(max(costs))
    for it in claim["items"]:
        f[12 + it["code"] % 36] += 1.0
    for tok in claim["notes"].split():
        f[NUM_FEATURES + int(tok[1:])] += 1.0
    return f, claim["fraud"]


class ClaimArchive(keras.utils.PyDataset):
    def __init__(self, path, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.path = path
        self.batch_size = batch_size
        with zipfile.ZipFile(path) as zf:
            self.names = sorted(n for n in zf.namelist() if n.endswith(".json"))
        np.random.default_rng(1).shuffle(self.names)

    def __len__(self):
        return len(self.names) // self.batch_size

    def __getitem__(self, idx):
        names = self.names[idx * self.batch_size : (idx + 1) * self.batch_size]
        xs, ys = [], []
        with zipfile.ZipFile(self.path) as zf:
            for name in names:
                claim = json.loads(zf.read(name))
                x, y = featurize(claim)
                xs.append(x)
                ys.append(y)
        return np.stack(xs), np.array(ys, dtype=np.float32)


def build_model():
    inp = keras.Input((NUM_FEATURES + TEXT_VOCAB,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC", "precision"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(data):
    keras.utils.set_random_seed(4)
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="u22_input_pydataset_zip_claims_")
    try:
        archive = os.path.join(tmp, "claims.zip")
        write_archive(archive, NUM_CLAIMS)
        data = ClaimArchive(archive, BATCH, workers=3, use_multiprocessing=True)
        full = train(data)
        append_out({"steps_per_second": 1.0 / full})
        msg = f"claims: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            xb, yb = ClaimArchive(archive, BATCH)[0]
            compute = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_out({"truth_input_fraction": frac})
            msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
