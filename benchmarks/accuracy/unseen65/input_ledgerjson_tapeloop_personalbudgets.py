"""Personal budgets: overspend-risk regressor trained with a GradientTape loop fed from Python.

Bottleneck (input): every step json.loads a batch of monthly ledger documents, categorises each
line item with keyword rules, aggregates per-category spend and rolling ratios in Python, and only
then calls the compiled train step.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6505
N_DOCS = 1536
ITEMS = 30
CATS = ["rent", "groceries", "dining", "transport", "utilities", "fun", "health", "savings"]
KEYWORDS = {"rent": ["landlord", "rent", "lease"], "groceries": ["market", "grocer", "foods"],
            "dining": ["cafe", "pizza", "bistro", "burger"], "transport": ["metro", "fuel", "taxi"],
            "utilities": ["power", "water", "internet"], "fun": ["cinema", "concert", "steam"],
            "health": ["pharmacy", "clinic", "gym"], "savings": ["transfer to savings", "isa", "401k"]}
BATCH = 64
STEPS = 150
FEAT = len(CATS) * 4 + 4


def make_ledgers(rng):
    docs, targets = [], []
    flat = [(c, k) for c, ks in KEYWORDS.items() for k in ks]
    for d in range(N_DOCS):
        income = float(rng.uniform(2000, 9000))
        items = []
        total = 0.0
        for j in range(ITEMS):
            c, k = flat[int(rng.integers(0, len(flat)))]
            amt = round(float(rng.lognormal(3.5, 0.9)), 2)
            total += amt
            items.append({"date": "2024-%02d-%02d" % (1 + d % 12, 1 + j % 28),
                          "description": "%s %s #%d" % (k.upper(), "POS", int(rng.integers(1000))),
                          "amount": {"value": str(amt), "currency": "USD"},
                          "tags": ["card"] if rng.random() < 0.7 else ["ach", "recurring"]})
        docs.append(json.dumps({"user": "u%05d" % d, "income": {"monthly": str(round(income, 2))},
                                "items": items}))
        targets.append(total / income)
    return docs, np.array(targets, np.float32)


def featurize(doc_text):
    doc = json.loads(doc_text)
    income = float(doc["income"]["monthly"])
    spend = {c: 0.0 for c in CATS}
    count = {c: 0 for c in CATS}
    recurring = {c: 0 for c in CATS}
    biggest = {c: 0.0 for c in CATS}
    for it in doc["items"]:
        desc = it["description"].lower()
        cat = "fun"
        for c, kws in KEYWORDS.items():
            if any(k in desc for k in kws):
                cat = c
                break
        v = float(it["amount"]["value"])
        spend[cat] += v
        count[cat] += 1
        recurring[cat] += "recurring" in it["tags"]
        biggest[cat] = max(biggest[cat], v)
    f = []
    for c in CATS:
        f += [spend[c] / income, count[c] / ITEMS, recurring[c] / ITEMS, biggest[c] / income]
    f += [income / 10000.0, len(doc["items"]) / ITEMS, sum(spend.values()) / income / 2, 1.0]
    return f


def build_model():
    return keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])


def train(model, batches):
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for x, y in batches():
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    docs, targets = make_ledgers(np.random.default_rng(SEED))
    order = np.random.default_rng(SEED + 1).permutation(N_DOCS)

    def python_batches():
        for s in range(STEPS):
            ids = order[(s * BATCH + np.arange(BATCH)) % N_DOCS]
            x = np.asarray([featurize(docs[i]) for i in ids], np.float32)
            yield x, targets[ids][:, None]

    keras.utils.set_random_seed(SEED)
    full, loss = train(build_model(), python_batches)
    emit({"steps_per_second": 1.0 / full})
    print(f"[personalbudgets] json ledger tape loop: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"loss {loss:.4f}, wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb, yb = next(python_batches())

        def same_batch():
            for _ in range(STEPS):
                yield xb, yb

        keras.utils.set_random_seed(SEED)
        comp, _ = train(build_model(), same_batch)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[personalbudgets] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
