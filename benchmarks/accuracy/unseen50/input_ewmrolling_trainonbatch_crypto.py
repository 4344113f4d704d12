"""Next-hour direction prediction for a basket of crypto-asset minute bars.
Synthetic OHLCV minute bars for 40 assets sit in one long pandas DataFrame. For every batch
the loop samples (asset, end-minute) anchors, slices the asset's history and computes
technical features with pandas (EWM MACD, rolling volatility, RSI, rolling z-scored volume)
per sample, then calls model.train_on_batch (causal Conv1D classifier) on the stacked windows.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import pandas as pd
import tensorflow as tf
import keras

SEED = 50
N_ASSETS = 40
N_MIN = 20000
LOOKBACK = 240
WIN = 128
BATCH = 48
STEPS = 150
N_FEAT = 8


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_bars(rng):
    frames = []
    idx = pd.date_range("2026-01-01", periods=N_MIN, freq="min")
    for a in range(N_ASSETS):
        ret = rng.standard_t(4, N_MIN) * 0.001 * (1 + 0.5 * np.sin(np.arange(N_MIN) / 900.0))
        close = 100 * np.exp(np.cumsum(ret))
        high = close * (1 + np.abs(rng.normal(0, 0.0008, N_MIN)))
        low = close * (1 - np.abs(rng.normal(0, 0.0008, N_MIN)))
        vol = rng.lognormal(3, 0.6, N_MIN) * (1 + 20 * np.abs(ret))
        frames.append(pd.DataFrame({"asset": f"A{a:02d}", "close": close, "high": high,
                                    "low": low, "volume": vol}, index=idx))
    return pd.concat(frames)


def features(hist):
    c = hist["close"]
    ema12 = c.ewm(span=12, adjust=False).mean()
    ema26 = c.ewm(span=26, adjust=False).mean()
    macd = ema12 - ema26
    signal = macd.ewm(span=9, adjust=False).mean()
    ret = np.log(c).diff()
    vol = ret.rolling(30).std()
    delta = c.diff()
    up = delta.clip(lower=0).ewm(alpha=1 / 14, adjust=False).mean()
    down = (-delta.clip(upper=0)).ewm(alpha=1 / 14, adjust=False).mean()
    rsi = 100 - 100 / (1 + up / (down + 1e-12))
    v = hist["volume"]
    vz = (v - v.rolling(60).mean()) / (v.rolling(60).std() + 1e-9)
    rng_ = (hist["high"] - hist["low"]) / c
    feat = pd.DataFrame({"ret": ret * 100, "macd": macd / c * 100, "sig": signal / c * 100,
                         "vol": vol * 100, "rsi": rsi / 100 - 0.5, "vz": vz,
                         "range": rng_ * 100, "ema_gap": (c / ema26 - 1) * 100})
    return feat.iloc[-WIN:].fillna(0.0).to_numpy(np.float32)


def make_model():
    inp = keras.Input((WIN, N_FEAT))
    x = keras.layers.Conv1D(160, 5, padding="causal", activation="relu")(inp)
    x = keras.layers.Conv1D(160, 5, padding="causal", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    return m


def run_loop(model, next_batch):
    stamps = []
    loss = float("nan")
    for i in range(STEPS):
        x, y = next_batch(i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_ewmrolling_trainonbatch_crypto_")
    try:
        bars = make_bars(np.random.default_rng(SEED))
        by_asset = {k: g for k, g in bars.groupby("asset")}
        assets = sorted(by_asset)
        rng = np.random.default_rng(SEED + 1)

        def next_batch(i):
            xs, ys = [], []
            for _ in range(BATCH):
                g = by_asset[assets[int(rng.integers(N_ASSETS))]]
                end = int(rng.integers(LOOKBACK + WIN, N_MIN - 60))
                hist = g.iloc[end - LOOKBACK - WIN:end]
                xs.append(features(hist))
                ys.append(float(g["close"].iloc[end + 59] > g["close"].iloc[end - 1]))
            return np.stack(xs), np.asarray(ys, np.float32)

        model = make_model()
        full, loss = run_loop(model, next_batch)
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={loss:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next_batch(0)
            model2 = make_model()
            comp, _ = run_loop(model2, lambda i: (xb, yb))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_ewmrolling_trainonbatch_crypto: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
