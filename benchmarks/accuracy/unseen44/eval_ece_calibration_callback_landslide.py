"""Landslide-susceptibility mapping for a regional geological survey.
Terrain-cell features (slope, curvature, lithology one-hot, rainfall, NDVI, distance to roads and
streams) are simulated once into in-memory numpy arrays; a short model.fit trains an MLP while an
epoch-end callback runs model.evaluate on a large validation grid and model.predict on the full
regional holdout grid to compute expected calibration error and reliability bins for the map.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 256
STEPS = 60
EPOCHS = 3
FEATS = 24
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class CalibrationReport(keras.callbacks.Callback):
    """Epoch-end map QA: full validation evaluate + holdout predict + ECE."""

    def __init__(self, val, holdout):
        super().__init__()
        self.val, self.holdout = val, holdout
        self.ece, self.seconds = [], 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        self.model.evaluate(self.val[0], self.val[1], batch_size=512, verbose=0)
        p = self.model.predict(self.holdout[0], batch_size=512, verbose=0)[:, 0]
        y = self.holdout[1]
        bins = np.clip((p * 10).astype(int), 0, 9)
        ece = 0.0
        for b in range(10):
            m = bins == b
            if m.any():
                ece += m.mean() * abs(p[m].mean() - y[m].mean())
        self.ece.append(ece)
        self.seconds += time.perf_counter() - t


def simulate_cells(n, rng):
    slope = rng.gamma(2.0, 8.0, n)
    curv = rng.normal(0, 1, n)
    lith = rng.integers(0, 8, n)
    rain = rng.gamma(3.0, 400.0, n)
    ndvi = rng.beta(2, 2, n)
    droad = rng.exponential(500, n)
    dstream = rng.exponential(300, n)
    noise = rng.normal(0, 1, (n, FEATS - 14))
    logit = 0.08 * slope - 0.6 * curv + 0.002 * rain - 2.5 * ndvi - 0.002 * dstream + (lith == 3) * 1.2 - 4.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    x = np.column_stack([slope / 30, curv, np.eye(8)[lith], rain / 1500, ndvi, droad / 1000, dstream / 1000,
                         noise]).astype(np.float32)
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((FEATS,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_eval_ece_calibration_callback_landslide_")
    try:
        keras.utils.set_random_seed(SEED)
        rng = np.random.default_rng(SEED)
        x, y = simulate_cells(BATCH * STEPS, rng)
        val = simulate_cells(300000, rng)
        holdout = simulate_cells(900000, rng)
        model = build_model()
        timer = StepTimer()
        calib = CalibrationReport(val, holdout)
        t0 = time.perf_counter()
        model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, calib], verbose=0)
        fit_s = time.perf_counter() - t0
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step, eval %.1f of %.1f s fit" % (full, calib.seconds, fit_s)
        if truth:
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), epochs=EPOCHS,
                       steps_per_epoch=STEPS, callbacks=[t2, CalibrationReport(val, holdout)], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("eval_ece_calibration_callback_landslide: ece %.4f, %s" % (calib.ece[-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
