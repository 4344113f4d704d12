"""Probabilistic load forecasting for distribution substations with rolling backtests.

Hourly substation load windows are generated in memory; a small quantile MLP
(P10/P50/P90 with pinball loss) trains for a few short epochs, and after every
epoch a callback predicts every hourly origin of the multi-year backtest history and scores pinball
loss and interval coverage, so most of the wall time is prediction.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 128, 40, 5
LOOK, HOR, QS = 96, 24, (0.1, 0.5, 0.9)
N_TRAIN, N_BACKTEST = 12000, 600000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class Backtest(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__(); self.x, self.y = x, y; self.seconds = 0.0; self.scores = []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=512, verbose=0).reshape(-1, HOR, len(QS))
        pin = 0.0
        for k, q in enumerate(QS):
            e = self.y - pred[:, :, k]
            pin += float(np.mean(np.maximum(q * e, (q - 1) * e)))
        cover = float(np.mean((self.y >= pred[:, :, 0]) & (self.y <= pred[:, :, 2])))
        self.scores.append((pin / len(QS), cover))
        self.seconds += time.perf_counter() - t


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_windows(rng, n):
    t = (rng.integers(0, 24 * 365 * 3, (n, 1)) + np.arange(LOOK + HOR)[None, :]).astype(np.float32)
    base = rng.uniform(0.5, 1.5, (n, 1)).astype(np.float32)
    w = np.float32(2 * np.pi)
    s = base * (1 + 0.3 * np.sin(w * (t % 24) / 24) + 0.1 * np.sin(w * (t % 168) / 168))
    s += 0.05 * rng.standard_normal(s.shape, dtype=np.float32)
    return s[:, :LOOK], s[:, LOOK:]


def backtest_windows(rng):
    """Every hourly origin of a long multi-substation history, cut with stride tricks."""
    t = np.arange(N_BACKTEST + LOOK + HOR, dtype=np.float32)
    w = np.float32(2 * np.pi)
    s = 1 + 0.3 * np.sin(w * (t % 24) / 24) + 0.1 * np.sin(w * (t % 168) / 168)
    s = (s * rng.uniform(0.5, 1.5) + 0.05 * rng.standard_normal(t.shape, dtype=np.float32)).astype(np.float32)
    win = np.lib.stride_tricks.sliding_window_view(s, LOOK + HOR)[:N_BACKTEST]
    return np.ascontiguousarray(win[:, :LOOK]), np.ascontiguousarray(win[:, LOOK:])


def pinball(y, p):
    p = tf.reshape(p, (-1, HOR, len(QS)))
    loss = 0.0
    for k, q in enumerate(QS):
        e = y - p[:, :, k]
        loss += tf.reduce_mean(tf.maximum(q * e, (q - 1) * e))
    return loss / len(QS)


def build_model():
    inp = keras.Input((LOOK,))
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(HOR * len(QS))(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=pinball)
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_eval_quantile_backtest_substations_")
    try:
        t0 = time.perf_counter()
        x, y = make_windows(rng, N_TRAIN)
        bx, by = backtest_windows(rng)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=39).repeat().batch(BATCH)
        model = build_model()
        st, bt = StepTimer(), Backtest(bx, by)
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st, bt], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = (f"eval_quantile_backtest_substations: {1.0/full:.1f} steps/s, pinball={bt.scores[-1][0]:.4f} "
               f"coverage={bt.scores[-1][1]:.2f}, backtest {bt.seconds:.1f}s of {time.perf_counter()-t0:.1f}s")
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            st2, bt2 = StepTimer(), Backtest(bx, by)
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2, bt2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
