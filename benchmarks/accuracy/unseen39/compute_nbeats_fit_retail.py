"""Store-level daily sales forecasting with an N-BEATS network.

Hourly sales series for synthetic retail stores are generated in memory and
cut into (168-hour lookback, 24-hour horizon) windows held as numpy arrays;
model.fit trains a generic N-BEATS stack of fully connected blocks with
backcast/forecast residual links, so each step is dense matrix math.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, EPOCHS, NB = 256, 2, 60
LOOK, HOR, WIDTH, BLOCKS = 168, 24, 640, 6


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


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_windows(rng, n):
    h = np.arange(LOOK + HOR)
    start = rng.integers(0, 24 * 365, (n, 1))
    level = rng.lognormal(3, 0.5, (n, 1))
    t = h[None, :] + start
    s = level * (1 + 0.4 * np.sin(2 * np.pi * t / 24) + 0.2 * np.sin(2 * np.pi * t / 168))
    s = s + rng.normal(0, 0.1, s.shape) * level
    s = (s / level).astype(np.float32)
    return s[:, :LOOK], s[:, LOOK:]


def build_model():
    inp = keras.Input((LOOK,))
    resid, forecast = inp, None
    for b in range(BLOCKS):
        h = resid
        for _ in range(4):
            h = keras.layers.Dense(WIDTH, activation="relu")(h)
        back = keras.layers.Dense(LOOK)(h)
        fore = keras.layers.Dense(HOR)(h)
        resid = keras.layers.Subtract()([resid, back])
        forecast = fore if forecast is None else keras.layers.Add()([forecast, fore])
    m = keras.Model(inp, forecast)
    m.compile(optimizer="adam", loss="mae")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_compute_nbeats_fit_retail_")
    try:
        x, y = make_windows(rng, BATCH * NB)
        model = build_model()
        st = StepTimer()
        model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"compute_nbeats_fit_retail: {1.0/full:.2f} steps/s"
        if truth:
            m2 = build_model()
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), epochs=EPOCHS,
                   steps_per_epoch=NB, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f} ({full*1e3:.1f} vs {comp*1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
