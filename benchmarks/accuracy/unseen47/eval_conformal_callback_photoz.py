"""Observational cosmology: photometric redshifts with split-conformal error bars.

Galaxy ugriz magnitudes and colours are simulated from a redshift-dependent
template and held in memory; model.fit trains a small MLP for a few short
epochs. At every epoch end a callback predicts the full calibration catalogue
to set the conformal residual quantile, then predicts a large held-out survey
catalogue to report interval coverage and the outlier rate per redshift bin.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 8147
N_TRAIN = 256 * 40
N_CAL = 150_000
N_SURVEY = 250_000
BATCH = 256
STEPS = 40
EPOCHS = 4


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
        return float(np.mean(self.gaps[5:]))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def simulate(rng, n):
    z = rng.gamma(2.0, 0.35, n).clip(0.01, 3.0)
    lam = np.array([355, 469, 617, 748, 893], float)
    rest_break = 400.0 * (1 + z)[:, None]
    sed = 22.0 + 1.5 * np.tanh((rest_break - lam) / 80.0) + 2.5 * np.log10(1 + z)[:, None]
    sed += rng.normal(0, 0.3, (n, 1))
    err = 0.02 + 0.05 * rng.random((n, 5))
    mags = sed + rng.normal(0, 1, (n, 5)) * err
    colors = np.diff(mags, axis=1)
    x = np.concatenate([mags - 22.0, colors, err * 10], 1).astype(np.float32)
    return x, z.astype(np.float32)[:, None]


class ConformalReport(keras.callbacks.Callback):
    def __init__(self, cal, survey, alpha=0.1):
        super().__init__()
        self.cal, self.survey, self.alpha = cal, survey, alpha
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pc = self.model.predict(self.cal[0], batch_size=4096, verbose=0)
        scores = np.abs(pc - self.cal[1])[:, 0] / (1 + self.cal[1][:, 0])
        q = np.quantile(scores, np.ceil((len(scores) + 1) * (1 - self.alpha)) / len(scores))
        ps = self.model.predict(self.survey[0], batch_size=4096, verbose=0)
        zs = self.survey[1]
        dz = np.abs(ps - zs)[:, 0] / (1 + zs[:, 0])
        cover = float(np.mean(dz <= q))
        bins = np.digitize(zs[:, 0], [0.3, 0.6, 1.0, 1.5])
        outl = [float(np.mean(dz[bins == b] > 0.15)) for b in range(5)]
        self.last = (q, cover, outl)
        self.seconds += time.perf_counter() - t


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((14,))
    x = inp
    for _ in range(4):
        x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(1, activation="softplus")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="huber")
    return m


def train(data, cal, survey, **kw):
    model = build_model()
    timer = StepTimer()
    rep = ConformalReport(cal, survey)
    model.fit(*data, epochs=EPOCHS, callbacks=[timer, rep], verbose=0, **kw)
    return timer.sec_per_step(), rep


def main():
    t0 = time.perf_counter()
    rng = np.random.default_rng(SEED)
    xt, yt = simulate(rng, N_TRAIN)
    cal = simulate(rng, N_CAL)
    survey = simulate(rng, N_SURVEY)
    sps, rep = train((xt, yt), cal, survey, batch_size=BATCH)
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        one = tf.data.Dataset.from_tensors((xt[:BATCH], yt[:BATCH])).repeat()
        csps, _ = train((one,), cal, survey, steps_per_epoch=STEPS)
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    wall = time.perf_counter() - t0
    q, cover, outl = rep.last
    print("photoz conformal: q90 %.3f coverage %.3f outliers %s full %.4fs/step%s eval %.1fs of %.1fs"
          % (q, cover, ["%.2f" % o for o in outl], sps, msg, rep.seconds, wall))


if __name__ == "__main__":
    main()
