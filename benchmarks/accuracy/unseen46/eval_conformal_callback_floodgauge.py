"""River-stage nowcasting for a flood-gauge network: predict the stage 6 h
ahead from 48 engineered hydro-met features (upstream stages, rainfall
accumulations, soil moisture), all generated in memory.  A short model.fit
runs with a callback that, at every epoch end, calls predict on a large
calibration split to fit split-conformal quantiles and then evaluates
interval coverage and MAE on a large held-out test split."""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, NTRAIN, NCAL, NTEST, D = 256, 40, 4, 20000, 400000, 400000, 48


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
        return float(np.mean(self.gaps[5:]))


class ConformalAudit(keras.callbacks.Callback):
    def __init__(self, cal, test, alpha=0.1):
        super().__init__(); self.cal, self.test, self.alpha = cal, test, alpha
        self.eval_seconds = 0.0; self.rows = []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        xc, yc = self.cal
        res = np.abs(self.model.predict(xc, batch_size=256, verbose=0)[:, 0] - yc)
        q = np.quantile(res, np.ceil((len(res) + 1) * (1 - self.alpha)) / len(res))
        xt, yt = self.test
        pt = self.model.predict(xt, batch_size=256, verbose=0)[:, 0]
        mae = self.model.evaluate(xt, yt, batch_size=256, verbose=0, return_dict=True)["mae"]
        cover = float(np.mean(np.abs(pt - yt) <= q))
        self.rows.append((epoch, float(q), cover, mae))
        self.eval_seconds += time.perf_counter() - t


def make(rng, n, w):
    x = rng.normal(size=(n, D)).astype(np.float32)
    y = (np.tanh(x @ w[:, 0]) * 2 + 0.5 * x[:, 0] * x[:, 1] + rng.normal(0, 0.2, n)).astype(np.float32)
    return x, y


def build():
    keras.utils.set_random_seed(31)
    m = keras.Sequential([keras.Input((D,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(keras.optimizers.Adam(1e-3), "huber", metrics=["mae"])
    return m


def run(model, data, cal, test):
    timer, audit = StepTimer(), ConformalAudit(cal, test)
    t = time.perf_counter()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
    return timer.sec_per_step(), audit, time.perf_counter() - t


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(46)
    w = rng.normal(size=(D, 1)).astype(np.float32) / np.sqrt(D)
    xtr, ytr = make(rng, NTRAIN, w); cal = make(rng, NCAL, w); test = make(rng, NTEST, w)
    ds = tf.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(NTRAIN, seed=1).repeat().batch(BATCH)
    t0 = time.perf_counter()
    full, audit, fit_wall = run(build(), ds, cal, test)
    emit("steps_per_second", 1.0 / full)
    ep, q, cover, mae = audit.rows[-1]
    msg = "q90=%.3f coverage=%.3f mae=%.3f sec/step=%.4f eval_share_of_fit=%.2f" % (
        q, cover, mae, full, audit.eval_seconds / fit_wall)
    if truth:
        xb, yb = next(iter(ds))
        comp, _, _ = run(build(), tf.data.Dataset.from_tensors((xb, yb)).repeat(), cal, test)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit("truth_input_fraction", frac)
        msg += " compute=%.4f truth=%.3f" % (comp, frac)
    print("eval_conformal_callback_floodgauge: %s wall=%.1fs" % (msg, time.perf_counter() - t0))


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


if __name__ == "__main__":
    main()
