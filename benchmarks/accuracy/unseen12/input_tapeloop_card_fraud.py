"""Card-fraud detection on per-customer transaction sequences, custom training loop.

A small Python loader class walks a synthetic transaction ledger and, for each sampled
transaction, engineers features from that customer's recent history (time since last
purchase, amount z-score, merchant novelty, velocity) to build a (SEQ_LEN, F) window.
A GRU-free Conv1D/attention model is trained with tf.GradientTape in a @tf.function.

    python input_tapeloop_card_fraud.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_CUSTOMERS = 2000
TX_PER_CUSTOMER = 120
SEQ_LEN = 32
N_MCC = 24
N_FEAT = 6 + N_MCC
BATCH_SIZE = 64
STEPS = 260


def make_ledger(seed=0):
    rng = np.random.default_rng(seed)
    ledger = []
    for cust in range(N_CUSTOMERS):
        base_amt = rng.lognormal(3.0, 0.6)
        fav = rng.choice(N_MCC, size=4, replace=False)
        gaps = rng.exponential(rng.uniform(2, 30), size=TX_PER_CUSTOMER)
        times = np.cumsum(gaps)
        amounts = rng.lognormal(np.log(base_amt), 0.5, size=TX_PER_CUSTOMER)
        mcc = np.where(
            rng.random(TX_PER_CUSTOMER) < 0.85,
            rng.choice(fav, size=TX_PER_CUSTOMER),
            rng.integers(0, N_MCC, size=TX_PER_CUSTOMER),
        )
        fraud = np.zeros(TX_PER_CUSTOMER, dtype=np.int32)
        if rng.random() < 0.3:  # account takeover: burst of odd purchases at the end
            start = int(rng.integers(SEQ_LEN, TX_PER_CUSTOMER - 5))
            fraud[start:] = 1
            amounts[start:] *= rng.uniform(3, 8)
            times[start:] = times[start] + np.cumsum(rng.exponential(0.05, TX_PER_CUSTOMER - start))
            mcc[start:] = rng.integers(0, N_MCC, size=TX_PER_CUSTOMER - start)
        ledger.append({"t": times, "amt": amounts, "mcc": mcc, "fraud": fraud})
    return ledger


class TransactionLoader:
    """Yields (features, label) batches; label = is the last transaction fraudulent."""

    def __init__(self, ledger, batch_size, seed=0):
        self.ledger = ledger
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        return self

    def _window(self, cust, end):
        rec = self.ledger[cust]
        feats = np.zeros((SEQ_LEN, N_FEAT), dtype=np.float32)
        seen = set()
        history = []
        for j, idx in enumerate(range(end - SEQ_LEN + 1, end + 1)):
            amt = float(rec["amt"][idx])
            dt = float(rec["t"][idx] - rec["t"][idx - 1]) if idx > 0 else 30.0
            history.append(amt)
            recent = history[-10:]
            mean = sum(recent) / len(recent)
            std = (sum((a - mean) ** 2 for a in recent) / len(recent)) ** 0.5 + 1.0
            window_start = rec["t"][idx] - 1.0
            velocity = int(np.sum((rec["t"][max(0, idx - 20) : idx + 1] > window_start)))
            m = int(rec["mcc"][idx])
            feats[j, 0] = np.log1p(amt)
            feats[j, 1] = (amt - mean) / std
            feats[j, 2] = np.log1p(dt)
            feats[j, 3] = 0.0 if m in seen else 1.0
            feats[j, 4] = velocity / 10.0
            feats[j, 5] = (rec["t"][idx] % 24.0) / 24.0
            feats[j, 6 + m] = 1.0
            seen.add(m)
        return feats, rec["fraud"][end]

    def __next__(self):
        xs = np.empty((self.batch_size, SEQ_LEN, N_FEAT), dtype=np.float32)
        ys = np.empty((self.batch_size,), dtype=np.float32)
        for i in range(self.batch_size):
            cust = int(self.rng.integers(N_CUSTOMERS))
            end = int(self.rng.integers(SEQ_LEN, TX_PER_CUSTOMER))
            xs[i], ys[i] = self._window(cust, end)
        return xs, ys


def build_model():
    inp = keras.Input((SEQ_LEN, N_FEAT))
    x = keras.layers.Dense(64, activation="gelu")(inp)
    x = keras.layers.Conv1D(64, 5, padding="causal", activation="gelu")(x)
    att = keras.layers.MultiHeadAttention(num_heads=2, key_dim=32)(x, x)
    x = keras.layers.LayerNormalization()(x + att)
    x = keras.layers.Conv1D(64, 3, padding="causal", activation="gelu")(x)
    last = keras.layers.Lambda(lambda t: t[:, -1, :])(x)
    pooled = keras.layers.GlobalAveragePooling1D()(x)
    h = keras.layers.Concatenate()([last, pooled])
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    return keras.Model(inp, out, name="fraud_seq")


def train(loader):
    keras.utils.set_random_seed(5)
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    auc = keras.metrics.AUC(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)[:, 0]
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        auc.update_state(y, logits)
        return loss

    step_ends = []
    losses = []
    step = 0
    for x, y in loader:
        loss = train_step(x, y)
        losses.append(float(loss))
        step_ends.append(time.perf_counter())
        step += 1
        if step >= STEPS:
            break
    sec = (step_ends[-1] - step_ends[4]) / (len(step_ends) - 5)
    return sec, float(np.mean(losses[-20:])), float(auc.result())


class RepeatBatch:
    def __init__(self, batch):
        self.batch = batch

    def __iter__(self):
        while True:
            yield self.batch


def write_result(**kw):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kw) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    ledger = make_ledger()
    full, loss, auc = train(TransactionLoader(ledger, BATCH_SIZE))
    write_result(steps_per_second=1.0 / full)
    line = f"fraud: {STEPS} steps, {1 / full:.2f} steps/s, loss {loss:.4f}, auc {auc:.3f}"
    if args.truth:
        xb, yb = next(TransactionLoader(ledger, BATCH_SIZE, seed=123))
        compute, _, _ = train(RepeatBatch((tf.constant(xb), tf.constant(yb))))
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result(truth_input_fraction=frac)
        line += f", truth_input_fraction {frac:.3f}"
    print(line)


if __name__ == "__main__":
    main()
