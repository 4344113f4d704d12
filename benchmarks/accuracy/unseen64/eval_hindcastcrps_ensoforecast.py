import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

# ENSO forecasting: 12 months x 24 predictors (SST anomalies in Pacific boxes, zonal
# wind stress, thermocline depth) -> Nino-3.4 anomaly at 6 lead times. Training is a
# small model.fit on in-memory data; at every epoch end a HindcastSkill callback runs
# model.predict over a large hindcast archive for an ensemble of perturbed initial
# conditions and scores it with CRPS and anomaly correlation in numpy. Bottleneck: the
# per-epoch evaluation.
BATCH = 64
STEPS = 25
EPOCHS = 3
NFEAT = 12 * 24
N_TRAIN = 3200
N_HIND = 50000
MEMBERS = 4
rng0 = np.random.default_rng(64010)
W_TRUE = rng0.normal(0, 0.1, (NFEAT, 6)).astype(np.float32)
XT = rng0.normal(0, 1, (N_TRAIN, NFEAT)).astype(np.float32)
YT = np.tanh(XT @ W_TRUE) + rng0.normal(0, 0.1, (N_TRAIN, 6)).astype(np.float32)
XH = rng0.normal(0, 1, (N_HIND, NFEAT)).astype(np.float32)
YH = np.tanh(XH @ W_TRUE).astype(np.float32)


def crps_ensemble(ens, obs):
    # ens: (M, N, L); fair CRPS estimator
    t1 = np.mean(np.abs(ens - obs[None]), axis=0)
    t2 = np.mean(np.abs(ens[:, None] - ens[None, :]), axis=(0, 1))
    return float(np.mean(t1 - 0.5 * t2))


class HindcastSkill(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = 0.0
        self.rng = np.random.default_rng(5)

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        ens = []
        for m in range(MEMBERS):
            pert = XH + self.rng.normal(0, 0.05, XH.shape).astype(np.float32)
            ens.append(self.model.predict(pert, batch_size=1024, verbose=0))
        ens = np.stack(ens)
        mean = ens.mean(0)
        acc = [float(np.corrcoef(mean[:, k], YH[:, k])[0, 1]) for k in range(6)]
        self.last = (crps_ensemble(ens, YH), acc)
        self.seconds += time.perf_counter() - t


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(6)])
    m.compile(optimizer="adam", loss="mse")
    return m


def make_ds():
    return tf.data.Dataset.from_tensor_slices((XT, YT)).shuffle(N_TRAIN, seed=2).repeat().batch(BATCH).prefetch(2)


def run(ds):
    model = build_model()
    timer, skill = StepTimer(), HindcastSkill()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, skill], verbose=0)
    return sec_per_step(timer.gaps), skill


full, skill = run(make_ds())
wall = time.perf_counter() - WALL0
emit({"steps_per_second": 1.0 / full})
print("ensoforecast fit+hindcast eval: %.4f s/step, %.2f steps/s, eval %.1f s = %.1f%% of wall %.1f s, CRPS %.4f"
      % (full, 1.0 / full, skill.seconds, 100 * skill.seconds / wall, wall, skill.last[0]))
if TRUTH:
    batch = next(iter(make_ds()))
    comp, skill2 = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - WALL0
    print("truth: full %.4f compute %.4f fraction %.3f; eval both runs %.1f s = %.1f%% of wall %.1f s"
          % (full, comp, frac, skill.seconds + skill2.seconds, 100 * (skill.seconds + skill2.seconds) / wall, wall))
