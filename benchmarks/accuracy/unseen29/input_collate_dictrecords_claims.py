"""Insurance claim triage: predict whether a claim escalates to an adjuster.

Claims live in memory as a list of Python dict records (mixed numeric fields,
categorical strings, a variable-length list of adjuster-note tokens, a list of
line items). A hand-written pure-Python ``collate`` turns a list of records into
padded NumPy arrays for every step of a custom training loop.
"""
import argparse
import json
import os
import random
import time

import numpy as np
import tensorflow as tf
import keras

BATCH = 128
STEPS = 600
MAX_TOKENS = 96
MAX_ITEMS = 96
VOCAB = 5000
REGIONS = ["north", "south", "east", "west", "central", "coastal", "mountain", "metro"]
POLICY_TYPES = ["auto", "home", "renters", "umbrella", "marine", "commercial"]


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_records(n=12000, seed=0):
    rng = random.Random(seed)
    records = []
    for i in range(n):
        n_tok = rng.randint(10, 140)
        n_items = rng.randint(10, 110)
        records.append({
            "claim_id": f"CLM-{i:07d}",
            "age": rng.randint(18, 90),
            "region": rng.choice(REGIONS),
            "policy": rng.choice(POLICY_TYPES),
            "amount": rng.lognormvariate(8, 1.2),
            "prior_claims": rng.randint(0, 6),
            "notes": [rng.randint(1, VOCAB - 1) for _ in range(n_tok)],
            "items": [{"cost": rng.uniform(5, 5000), "qty": rng.randint(1, 5),
                       "code": rng.randint(0, 99)} for _ in range(n_items)],
            "escalated": int(rng.random() < 0.3),
        })
    return records


def collate(batch):
    """Pure-Python collation of a list of claim dicts into model arrays."""
    numeric, tokens, items, labels = [], [], [], []
    for r in batch:
        region = [0.0] * len(REGIONS)
        region[REGIONS.index(r["region"])] = 1.0
        policy = [0.0] * len(POLICY_TYPES)
        policy[POLICY_TYPES.index(r["policy"])] = 1.0
        total = sum(it["cost"] * it["qty"] for it in r["items"])
        numeric.append([r["age"] / 90.0, np.log1p(r["amount"]) / 15.0,
                        r["prior_claims"] / 6.0, np.log1p(total) / 15.0] + region + policy)
        toks = r["notes"][:MAX_TOKENS]
        tokens.append(toks + [0] * (MAX_TOKENS - len(toks)))
        rows = []
        for it in r["items"][:MAX_ITEMS]:
            rows.append([np.log1p(it["cost"]) / 9.0, it["qty"] / 5.0, it["code"] / 99.0])
        while len(rows) < MAX_ITEMS:
            rows.append([0.0, 0.0, 0.0])
        items.append(rows)
        labels.append(r["escalated"])
    return (np.asarray(numeric, np.float32), np.asarray(tokens, np.int32),
            np.asarray(items, np.float32), np.asarray(labels, np.float32))


def build_model():
    num_in = keras.Input((4 + len(REGIONS) + len(POLICY_TYPES),))
    tok_in = keras.Input((MAX_TOKENS,), dtype="int32")
    item_in = keras.Input((MAX_ITEMS, 3))
    t = keras.layers.Embedding(VOCAB, 32)(tok_in)
    t = keras.layers.Conv1D(32, 5, activation="relu")(t)
    t = keras.layers.GlobalMaxPooling1D()(t)
    it = keras.layers.Dense(32, activation="relu")(item_in)
    it = keras.layers.GlobalAveragePooling1D()(it)
    x = keras.layers.Concatenate()([num_in, t, it])
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model([num_in, tok_in, item_in], out)


def train(next_batch):
    keras.utils.set_random_seed(1)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(num, tok, itm, y):
        with tf.GradientTape() as tape:
            logits = model([num, tok, itm], training=True)
            loss = loss_fn(y[:, None], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        num, tok, itm, y = next_batch(step)
        loss = float(train_step(num, tok, itm, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    records = make_records()
    order = list(range(len(records)))
    random.Random(3).shuffle(order)
    per_epoch = len(records) // BATCH

    def next_batch(step):
        k = step % per_epoch
        return collate([records[i] for i in order[k * BATCH:(k + 1) * BATCH]])

    full, loss = train(next_batch)
    report("steps_per_second", 1.0 / full)
    msg = f"claims: {1.0 / full:.2f} steps/s, last loss {loss:.4f}"
    if args.truth:
        fixed = next_batch(0)
        compute, _ = train(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
