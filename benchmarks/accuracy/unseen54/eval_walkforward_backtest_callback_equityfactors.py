"""Equity cross-sectional return model with a walk-forward backtest after every epoch.

Synthetic monthly factor exposures (value, momentum, quality, size, volatility
and their interactions) for a broad stock universe are generated in memory.
The model trains briefly on the early months; after every epoch a callback
replays a 36-month walk-forward backtest: it predicts each month's full
cross-section, forms long/short decile portfolios and reports the Sharpe ratio
and rank IC, then runs model.evaluate on the out-of-sample months.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

N_STOCKS = 5000
TRAIN_MONTHS = 6
TEST_MONTHS = 36
FEATS = 48
BATCH = 512
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class WalkForwardBacktest(keras.callbacks.Callback):
    def __init__(self, months_x, months_y):
        super().__init__()
        self.mx, self.my = months_x, months_y
        self.seconds, self.history = 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        rets, ics = [], []
        for x, y in zip(self.mx, self.my):
            score = self.model.predict(x, batch_size=256, verbose=0)[:, 0]
            order = np.argsort(score)
            k = len(order) // 10
            rets.append(y[order[-k:]].mean() - y[order[:k]].mean())
            rs, ry = np.argsort(np.argsort(score)), np.argsort(np.argsort(y))
            ics.append(np.corrcoef(rs, ry)[0, 1])
        rets = np.array(rets)
        sharpe = rets.mean() / (rets.std() + 1e-9) * np.sqrt(12)
        oos = self.model.evaluate(np.concatenate(self.mx), np.concatenate(self.my), batch_size=256, verbose=0)
        self.history.append((sharpe, float(np.mean(ics)), oos))
        self.seconds += time.perf_counter() - t


def make_panel(rng, months):
    beta = rng.normal(0, 1, 12)
    xs, ys = [], []
    for _ in range(months):
        base = rng.normal(0, 1, (N_STOCKS, 12))
        inter = np.concatenate([base * np.roll(base, 1, 1), base ** 2 - 1, np.tanh(base * 2)], 1)
        x = np.concatenate([base, inter], 1).astype(np.float32)
        y = (0.02 * np.tanh(base @ beta / 4) + 0.01 * base[:, 0] * base[:, 1]
             + rng.normal(0, 0.15, N_STOCKS)).astype(np.float32)
        xs.append(x)
        ys.append(y)
    return xs, ys


def build_model():
    m = keras.Sequential([keras.Input((FEATS,)),
                          keras.layers.Dense(256, activation="gelu"),
                          keras.layers.Dropout(0.1),
                          keras.layers.Dense(256, activation="gelu"),
                          keras.layers.Dense(64, activation="gelu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def train(data, bt, **kw):
    keras.utils.set_random_seed(31)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer, bt], verbose=0, **kw)
    return timer.sec_per_step()


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_eval_walkforward_backtest_callback_equityfactors_")
    try:
        rng = np.random.default_rng(54)
        tx, ty = make_panel(rng, TRAIN_MONTHS)
        vx, vy = make_panel(rng, TEST_MONTHS)
        x, y = np.concatenate(tx), np.concatenate(ty)
        steps = len(x) // BATCH
        bt = WalkForwardBacktest(vx, vy)
        t_fit = time.perf_counter()
        full = train(x, bt, y=y, batch_size=BATCH, shuffle=True)
        plain_wall = time.perf_counter() - t0
        append({"steps_per_second": 1.0 / full})
        sharpe, ic, oos = bt.history[-1]
        msg = (f"full {full*1000:.1f} ms/step, fit+backtest {plain_wall - (t_fit - t0):.1f}s, backtest {bt.seconds:.1f}s "
               f"({100*bt.seconds/plain_wall:.0f}% of wall so far), sharpe {sharpe:.2f}, IC {ic:.3f}, oos mse {oos:.4f}")
        if "--truth" in sys.argv:
            batch = (x[:BATCH], y[:BATCH])
            comp = train(tf.data.Dataset.from_tensors(batch).repeat(), WalkForwardBacktest(vx, vy),
                         steps_per_epoch=steps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"eval_walkforward_backtest_callback_equityfactors: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
