"""Next-bar direction from raw tick prices, with technical indicators computed per sample.

A keras.utils.PyDataset (workers=2, threads) slices a window of raw ticks for each sample and
computes returns, EMAs, MACD, RSI, Bollinger width and realised volatility in Python/numpy
at load time. Small Conv1D + LSTM classifier, batch 64, model.fit with steps_per_execution=2
and ReduceLROnPlateau.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

N_TICKERS = 300
N_TICKS = 6000
BARS = 64
TICKS_PER_BAR = 8
N_FEATS = 10
BATCH = 64
STEPS = 40
EPOCHS = 3
SPE = 2


def simulate_market(rng):
    vol = rng.uniform(0.0005, 0.003, size=(N_TICKERS, 1))
    drift = rng.normal(0, 0.00005, size=(N_TICKERS, 1))
    shocks = rng.standard_t(4, size=(N_TICKERS, N_TICKS)) * vol + drift
    prices = 100 * np.exp(np.cumsum(shocks, axis=1))
    volume = rng.lognormal(8, 1, size=(N_TICKERS, N_TICKS))
    return prices.astype(np.float64), volume


def ema(values, span):
    alpha = 2.0 / (span + 1)
    out = []
    acc = values[0]
    for v in values:
        acc = alpha * v + (1 - alpha) * acc
        out.append(acc)
    return np.array(out)


def rsi(closes, period=14):
    gains, losses = [], []
    avg_g = avg_l = 1e-9
    out = []
    for i in range(1, len(closes)):
        d = closes[i] - closes[i - 1]
        g, lo = max(d, 0.0), max(-d, 0.0)
        avg_g = (avg_g * (period - 1) + g) / period
        avg_l = (avg_l * (period - 1) + lo) / period
        gains.append(g)
        losses.append(lo)
        out.append(100 - 100 / (1 + avg_g / avg_l))
    return np.array([50.0] + out)


def window_features(ticks, vols):
    bars = ticks.reshape(BARS + 1, TICKS_PER_BAR)
    bvol = vols.reshape(BARS + 1, TICKS_PER_BAR).sum(axis=1)
    close = bars[:, -1]
    high = bars.max(axis=1)
    low = bars.min(axis=1)
    ret = np.diff(np.log(close), prepend=np.log(close[0]))
    tick_list = list(ticks)
    fast = ema(tick_list, 12 * TICKS_PER_BAR)[TICKS_PER_BAR - 1 :: TICKS_PER_BAR]
    slow = ema(tick_list, 26 * TICKS_PER_BAR)[TICKS_PER_BAR - 1 :: TICKS_PER_BAR]
    macd = (fast - slow) / close
    signal = ema(list(macd), 9)
    r = rsi(list(close)) / 100.0
    mid = np.convolve(close, np.ones(20) / 20, mode="same")
    sd = np.array([close[max(0, i - 19) : i + 1].std() for i in range(len(close))])
    boll = sd / (mid + 1e-9)
    rv = np.array([np.sqrt(np.sum(np.diff(np.log(b)) ** 2)) for b in bars])
    feats = np.stack(
        [
            ret * 100,
            (high - low) / close * 100,
            macd * 100,
            (macd - signal) * 100,
            r,
            boll * 10,
            rv * 100,
            np.log(bvol) - 11,
            (close - mid) / (sd + 1e-9) * 0.1,
            np.sign(ret),
        ],
        axis=1,
    )
    return feats[:BARS].astype(np.float32), np.float32(close[BARS] > close[BARS - 1])


class TickWindows(keras.utils.PyDataset):
    def __init__(self, prices, volume, n_batches, seed, **kwargs):
        super().__init__(**kwargs)
        self.prices, self.volume, self.n_batches = prices, volume, n_batches
        self.seed = seed
        self.span = (BARS + 1) * TICKS_PER_BAR

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100_003 + idx)
        xs = np.empty((BATCH, BARS, N_FEATS), np.float32)
        ys = np.empty((BATCH, 1), np.float32)
        for b in range(BATCH):
            t = rng.integers(N_TICKERS)
            s = rng.integers(0, N_TICKS - self.span)
            xs[b], ys[b, 0] = window_features(
                self.prices[t, s : s + self.span], self.volume[t, s : s + self.span]
            )
        return xs, ys


def build_model():
    model = keras.Sequential(
        [
            keras.Input((BARS, N_FEATS)),
            keras.layers.Conv1D(96, 5, padding="causal", activation="relu"),
            keras.layers.Conv1D(96, 5, padding="causal", activation="relu"),
            keras.layers.LSTM(96),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(5e-4),
        loss="binary_crossentropy",
        metrics=["AUC"],
        steps_per_execution=SPE,
    )
    return model


class StepTimer(keras.callbacks.Callback):
    # with steps_per_execution>1 the batch hooks fire once per execution
    def __init__(self, skip_steps=5, steps_per_call=1):
        super().__init__()
        self.skip, self.k = skip_steps, steps_per_call
        self.done = 0
        self.t_first = None

    def on_train_batch_end(self, batch, logs=None):
        self.done += self.k
        now = time.perf_counter()
        if self.t_first is None and self.done >= self.skip:
            self.t_first, self.n_first = now, self.done
        self.t_last = now

    def per_step(self):
        return (self.t_last - self.t_first) / (self.done - self.n_first)


def append_out(**kw):
    target = os.environ.get("ACCURACY_OUT")
    if target:
        with open(target, "a") as fh:
            print(json.dumps(kw), file=fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    truth = ap.parse_args().truth

    prices, volume = simulate_market(np.random.default_rng(42))
    train = TickWindows(prices, volume, STEPS, seed=1, workers=2, use_multiprocessing=False)

    model = build_model()
    timer = StepTimer(steps_per_call=SPE)
    model.fit(
        train,
        epochs=EPOCHS,
        callbacks=[keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=1), timer],
        verbose=2,
    )
    full = timer.per_step()
    append_out(steps_per_second=1.0 / full)
    print(f"train speed {1.0 / full:.2f} steps/s")

    if truth:
        xb, yb = train[0]
        ds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        model = build_model()
        timer2 = StepTimer(steps_per_call=SPE)
        model.fit(
            ds,
            steps_per_epoch=STEPS,
            epochs=EPOCHS,
            callbacks=[keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=1), timer2],
            verbose=0,
        )
        compute = timer2.per_step()
        frac = float(np.clip((full - compute) / full, 0.0, 1.0))
        append_out(truth_input_fraction=frac)
        print(
            f"truth input fraction={frac:.3f}  full={full * 1000:.1f}ms  "
            f"cached={compute * 1000:.1f}ms"
        )


if __name__ == "__main__":
    main()
