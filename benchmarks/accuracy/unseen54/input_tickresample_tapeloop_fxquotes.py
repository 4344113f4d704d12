"""Short-horizon FX direction model trained from raw tick quotes.

A synthetic trading day of EUR/USD bid/ask ticks with irregular timestamps is
held as a pandas DataFrame.  For every sample the loop slices a random
two-hour window, resamples the mid price to one-minute OHLC bars with pandas,
adds spread, tick-count and realised-volatility columns and labels the window
by the next 15 minutes' move; Python-built batches feed a @tf.function
GradientTape step.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pandas as pd

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

N_TICKS = 150_000
BARS = 120
BATCH = 32
STEPS = 60
FEATS = 8


def make_ticks(rng):
    gaps = rng.exponential(0.6, N_TICKS)
    ts = pd.Timestamp("2026-03-02 00:00:00") + pd.to_timedelta(np.cumsum(gaps), unit="s")
    vol = 2e-5 * (1 + 0.5 * np.sin(np.linspace(0, 6 * np.pi, N_TICKS)))
    mid = 1.0850 * np.exp(np.cumsum(rng.normal(0, 1, N_TICKS) * vol))
    spread = np.abs(rng.normal(8e-5, 2e-5, N_TICKS))
    return pd.DataFrame({"bid": mid - spread / 2, "ask": mid + spread / 2,
                         "size": rng.integers(1, 50, N_TICKS) * 1e5}, index=ts)


def window_features(ticks, start):
    t0 = ticks.index[start]
    win = ticks.loc[t0:t0 + pd.Timedelta(minutes=BARS + 15)]
    mid = (win["bid"] + win["ask"]) / 2
    hist = mid.loc[:t0 + pd.Timedelta(minutes=BARS)]
    bars = hist.resample("1min").ohlc().ffill()
    rs = hist.resample("1min")
    spread = (win["ask"] - win["bid"]).loc[:t0 + pd.Timedelta(minutes=BARS)].resample("1min").mean().ffill()
    count = rs.count()
    rv = np.log(hist).diff().pow(2).resample("1min").sum()
    vwap = (win["size"] * mid).resample("1min").sum() / win["size"].resample("1min").sum()
    f = pd.concat([bars, spread.rename("spread"), count.rename("n"), rv.rename("rv"),
                   vwap.loc[bars.index].rename("vwap")], axis=1).fillna(0.0).iloc[:BARS]
    ref = float(f["close"].iloc[-1])
    a = f.to_numpy(np.float64)
    a[:, [0, 1, 2, 3, 7]] = (a[:, [0, 1, 2, 3, 7]] / ref - 1) * 1e4
    a[:, 4] *= 1e4
    a[:, 5] = np.log1p(a[:, 5])
    a[:, 6] = np.sqrt(a[:, 6]) * 1e4
    out = np.zeros((BARS, FEATS), np.float32)
    out[:len(a)] = a
    label = float(mid.iloc[-1] > ref)
    return out, label


def batches(ticks, rng):
    hi = len(ticks) - 20_000
    while True:
        xs, ys = [], []
        for s in rng.integers(0, hi, BATCH):
            x, y = window_features(ticks, int(s))
            xs.append(x)
            ys.append(y)
        yield np.stack(xs), np.array(ys, np.float32)[:, None]


def build_model():
    return keras.Sequential([
        keras.Input((BARS, FEATS)),
        keras.layers.Conv1D(128, 5, padding="causal", activation="relu"),
        keras.layers.LSTM(256, return_sequences=True),
        keras.layers.LSTM(96),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(next_batch):
    keras.utils.set_random_seed(21)
    model = build_model()
    opt = keras.optimizers.Adam(5e-4)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_input_tickresample_tapeloop_fxquotes_")
    try:
        ticks = make_ticks(np.random.default_rng(54))
        ticks.to_pickle(os.path.join(tmp, "eurusd_20260302.pkl"))
        ticks = pd.read_pickle(os.path.join(tmp, "eurusd_20260302.pkl"))
        gen = batches(ticks, np.random.default_rng(2))
        full, loss = train(lambda: next(gen))
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            fixed = next(gen)
            comp, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_tickresample_tapeloop_fxquotes: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
