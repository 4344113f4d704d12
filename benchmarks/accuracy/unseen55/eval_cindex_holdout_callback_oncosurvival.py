"""Oncology: a DeepSurv-style Cox proportional-hazards network predicting
patient risk from clinical covariates plus a tumour gene-expression panel.

Training uses a small in-memory cohort; a callback scores a large registry
hold-out set with model.predict at the end of every epoch and computes
Harrell's concordance index on a stratified subsample, which dominates the
run time.
"""
import json
import os
import sys
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

FEATURES = 160
N_TRAIN = 4096
N_HOLDOUT = 500_000
BATCH = 128
EPOCHS = 3
STEPS = N_TRAIN // BATCH
CINDEX_SUB = 3000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_cohort(n, rng, beta):
    x = rng.normal(0, 1, (n, FEATURES)).astype(np.float32)
    risk = x @ beta + 0.3 * np.tanh(x[:, 0] * x[:, 1])
    t_event = rng.exponential(np.exp(-risk))
    t_cens = rng.exponential(1.5, n)
    time_obs = np.minimum(t_event, t_cens)
    event = (t_event <= t_cens).astype(np.float32)
    return x, time_obs.astype(np.float32), event


def cox_loss(y_true, y_pred):
    # y_true[:, 0] = time, y_true[:, 1] = event; Breslow partial likelihood within the batch
    t, e = y_true[:, 0], y_true[:, 1]
    r = tf.squeeze(y_pred, -1)
    order = tf.argsort(t, direction="DESCENDING")
    r, e = tf.gather(r, order), tf.gather(e, order)
    log_cum = tf.math.cumulative_logsumexp(r)
    return -tf.reduce_sum((r - log_cum) * e) / (tf.reduce_sum(e) + 1e-6)


def harrell_c(risk, t, e):
    comparable = (t[:, None] < t[None, :]) & (e[:, None] == 1)
    conc = (risk[:, None] > risk[None, :]) & comparable
    ties = (risk[:, None] == risk[None, :]) & comparable
    return (conc.sum() + 0.5 * ties.sum()) / max(comparable.sum(), 1)


class RegistryCIndex(keras.callbacks.Callback):
    def __init__(self, x, t, e):
        super().__init__()
        self.x, self.t, self.e = x, t, e
        self.seconds = 0.0
        self.sub = np.random.default_rng(3).choice(len(x), CINDEX_SUB, replace=False)

    def on_epoch_end(self, epoch, logs=None):
        t0 = time.perf_counter()
        risk = self.model.predict(self.x, batch_size=2048, verbose=0)[:, 0]
        c = harrell_c(risk[self.sub], self.t[self.sub], self.e[self.sub])
        self.seconds += time.perf_counter() - t0
        print("  epoch %d registry C-index %.4f (%d patients)" % (epoch + 1, c, len(self.x)))


def build_model():
    inp = keras.Input((FEATURES,))
    x = keras.layers.Dense(512, activation="selu")(inp)
    x = keras.layers.AlphaDropout(0.1)(x)
    x = keras.layers.Dense(512, activation="selu")(x)
    x = keras.layers.Dense(256, activation="selu")(x)
    out = keras.layers.Dense(1, use_bias=False)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(3e-4), loss=cox_loss)
    return m


def run(data, x_h, t_h, e_h, steps=None):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer, cb = StepTimer(), RegistryCIndex(x_h, t_h, e_h)
    if steps is None:
        model.fit(data[0], data[1], batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, cb], verbose=2)
    else:
        model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer, cb], verbose=2)
    return timer.sec_per_step(), cb.seconds


def main():
    rng = np.random.default_rng(55)
    beta = (rng.normal(0, 1, FEATURES) * (rng.random(FEATURES) < 0.1)).astype(np.float32) * 0.5
    x, t, e = make_cohort(N_TRAIN, rng, beta)
    x_h, t_h, e_h = make_cohort(N_HOLDOUT, rng, beta)
    y = np.stack([t, e], 1)
    full, eval_s = run((x, y), x_h, t_h, e_h)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    msg = "full %.1f ms/step, eval %.1f s of %.1f s wall (%.0f%%)" % (full * 1e3, eval_s, wall, 100 * eval_s / wall)
    if "--truth" in sys.argv:
        ds = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        comp, _ = run(ds, x_h, t_h, e_h, steps=STEPS)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print("eval_cindex_holdout_callback_oncosurvival:", msg)


if __name__ == "__main__":
    main()
