"""Severe-hail probability nowcasting from gridded radar/sounding features (per grid cell).
Training and a large verification set of synthetic cells are built in memory as numpy arrays;
model.fit trains a small MLP on a few hundred steps while an epoch-end callback scores the whole
verification set with model.predict and model.evaluate and builds a reliability diagram,
Brier skill score and ROC-AUC, as forecast-verification teams usually demand.
"""
import json
import os
import shutil
import sys
import tempfile
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N_FEAT = 40
N_TRAIN = 24000
N_VERIF = 900000
BATCH = 256
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class Verification(keras.callbacks.Callback):
    """Epoch-end forecast verification on the full verification set."""

    def __init__(self, xv, yv):
        super().__init__()
        self.xv, self.yv = xv, yv
        self.seconds = 0.0
        self.reports = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.xv, batch_size=2048, verbose=0).ravel()
        ev = self.model.evaluate(self.xv, self.yv, batch_size=2048, verbose=0, return_dict=True)
        bins = np.clip((p * 10).astype(int), 0, 9)
        rel = [(float(p[bins == b].mean()), float(self.yv[bins == b].mean()), int((bins == b).sum()))
               for b in range(10) if (bins == b).any()]
        brier = float(np.mean((p - self.yv) ** 2))
        clim = float(np.mean((self.yv.mean() - self.yv) ** 2))
        order = np.argsort(p)
        ranks = np.empty_like(order)
        ranks[order] = np.arange(1, p.size + 1)
        npos = self.yv.sum()
        auc = float((ranks[self.yv == 1].sum() - npos * (npos + 1) / 2) / (npos * (p.size - npos)))
        self.reports.append({"epoch": epoch, "bss": 1 - brier / clim, "auc": auc,
                             "val_loss": ev["loss"], "reliability": rel})
        self.seconds += time.perf_counter() - t


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_cells(rng, n):
    x = rng.standard_normal((n, N_FEAT)).astype(np.float32)
    cape, shear, fzl, mesh = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    logit = 1.2 * cape + 0.8 * shear - 0.6 * fzl + 1.5 * np.tanh(mesh) + 0.3 * cape * shear - 2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def make_model():
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(256, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
              metrics=[keras.metrics.AUC(name="auc")])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_eval_reliability_callback_hailforecast_")
    try:
        rng = np.random.default_rng(SEED)
        x, y = make_cells(rng, N_TRAIN)
        xv, yv = make_cells(rng, N_VERIF)
        steps = int(np.ceil(N_TRAIN / BATCH))
        model = make_model()
        timer, verif = StepTimer(), Verification(xv, yv)
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, verif], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T0
        msg = (f"loss={hist.history['loss'][-1]:.4f} bss={verif.reports[-1]['bss']:.3f} "
               f"auc={verif.reports[-1]['auc']:.3f} s/step={full:.4f} eval_s={verif.seconds:.1f} "
               f"wall_so_far={wall:.1f} eval_share={verif.seconds / wall:.2f}")
        if truth:
            one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            timer2, verif2 = StepTimer(), Verification(xv, yv)
            make_model().fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2, verif2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"eval_reliability_callback_hailforecast: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
