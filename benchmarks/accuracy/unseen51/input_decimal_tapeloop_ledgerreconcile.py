"""Ledger reconciliation: bank-statement lines arrive as pipe-delimited text with
amounts in several currencies; a Python batch builder parses each line, does exact
decimal.Decimal FX conversion, fee rounding and running balances per account, and the
resulting features feed a custom @tf.function GradientTape loop that flags mismatches.
"""
import json
import os
import shutil
import sys
import tempfile
import time
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, getcontext

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 300
LINES_PER_EXAMPLE = 24
N_LINES = 40_000
CURRENCIES = {"USD": "1", "EUR": "1.0834", "GBP": "1.2671", "JPY": "0.006712", "CHF": "1.1325", "SEK": "0.09514"}
FEAT = 6 + len(CURRENCIES) + 2 * LINES_PER_EXAMPLE
getcontext().prec = 28
CENT = Decimal("0.01")


def make_ledger(rng):
    accts = [f"AC{n:06d}" for n in rng.integers(0, 999999, 300)]
    cur = list(CURRENCIES)
    lines = []
    for i in range(N_LINES):
        c = cur[int(rng.integers(0, len(cur)))]
        amt = Decimal(int(rng.integers(-500000, 900000))) / 100
        fee = Decimal(int(rng.integers(0, 900))) / 1000
        lines.append(f"2026-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}|"
                     f"{accts[int(rng.integers(0, 300))]}|{amt}|{c}|{fee}|"
                     f"{'CR' if amt > 0 else 'DR'}|ref{int(rng.integers(1e9))}")
    return lines


def parse_example(lines):
    balances = {}
    feats = []
    per_cur = dict.fromkeys(CURRENCIES, 0)
    total = Decimal(0)
    fee_total = Decimal(0)
    odd = 0
    for ln in lines:
        date, acct, amt, cur, fee, side, ref = ln.split("|")
        rate = Decimal(CURRENCIES[cur])
        amt_d = Decimal(amt)
        usd = (amt_d * rate).quantize(CENT, rounding=ROUND_HALF_EVEN)
        fee_d = (abs(usd) * Decimal(fee) / 100).quantize(CENT, rounding=ROUND_HALF_UP)
        net = usd - fee_d if side == "CR" else usd + fee_d
        balances[acct] = balances.get(acct, Decimal(0)) + net
        total += net
        fee_total += fee_d
        per_cur[cur] += 1
        if (amt_d * 100) % 7 == 0:
            odd += 1
        feats += [float(net) / 1000.0, float(balances[acct]) / 1000.0]
    bank_total = (total * Decimal("1.0000")).quantize(Decimal("1"), rounding=ROUND_HALF_EVEN)
    mismatch = float(odd >= 2 or abs(total - bank_total) > Decimal("0.40"))
    v = [float(total) / 1000, float(fee_total) / 10, len(balances) / 10, odd,
         float(max(balances.values())) / 1000, float(min(balances.values())) / 1000]
    v += [per_cur[c] / LINES_PER_EXAMPLE for c in CURRENCIES]
    return np.array(v + feats, np.float32), np.float32(mismatch)


def batches(lines, rng):
    n_ex = len(lines) // LINES_PER_EXAMPLE
    while True:
        for start in range(0, n_ex - BATCH, BATCH):
            xs, ys = [], []
            for e in range(start, start + BATCH):
                x, y = parse_example(lines[e * LINES_PER_EXAMPLE:(e + 1) * LINES_PER_EXAMPLE])
                xs.append(x); ys.append(y)
            yield np.stack(xs), np.array(ys)[:, None]


def build_model():
    return keras.Sequential([keras.Input((FEAT,)),
                             keras.layers.Dense(512, activation="gelu"),
                             keras.layers.Dense(512, activation="gelu"),
                             keras.layers.Dense(256, activation="gelu"),
                             keras.layers.Dense(1)])


def train(model, batch_source):
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for _ in range(STEPS):
        x, y = next(batch_source)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)[5:]
    return float(gaps.mean()), loss


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_decimal_tapeloop_ledgerreconcile_")
    try:
        rng = np.random.default_rng(51)
        path = os.path.join(tmp, "statements.psv")
        with open(path, "w") as fh:
            fh.write("\n".join(make_ledger(rng)))
        with open(path) as fh:
            lines = fh.read().splitlines()

        tf.random.set_seed(51)
        t0 = time.perf_counter()
        full, loss = train(build_model(), batches(lines, rng))
        emit({"steps_per_second": 1.0 / full})
        if "--truth" in sys.argv:
            xb, yb = next(batches(lines, rng))

            def same():
                while True:
                    yield xb, yb
            tf.random.set_seed(51)
            comp, _ = train(build_model(), same())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        print(f"ledger mismatch model: {STEPS} steps, {1.0/full:.1f} steps/s, final loss {loss:.4f}, "
              f"train {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
