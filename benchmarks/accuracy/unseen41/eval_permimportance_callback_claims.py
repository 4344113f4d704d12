"""Motor-insurance claim severity regression on 24 tabular policy/vehicle features.
Data path: in-memory numpy arrays; model.fit on the training split, and at every epoch end a callback computes
permutation feature importance on the 40k-row validation split (one model.predict per shuffled column) for the
actuarial review, so evaluation dominates the wall time."""
import argparse, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
N_TRAIN = 20000
N_VAL = 40000
F = 24
BATCH = 256
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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class PermutationImportance(keras.callbacks.Callback):
    def __init__(self, xv, yv):
        super().__init__()
        self.xv, self.yv = xv, yv
        self.rng = np.random.default_rng(SEED)
        self.seconds, self.history = 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t0 = time.perf_counter()
        base = np.mean(np.abs(self.model.predict(self.xv, batch_size=512, verbose=0)[:, 0] - self.yv))
        imp = []
        for j in range(F):
            xp = self.xv.copy()
            xp[:, j] = self.rng.permutation(xp[:, j])
            imp.append(np.mean(np.abs(self.model.predict(xp, batch_size=512, verbose=0)[:, 0] - self.yv)) - base)
        self.history.append(imp)
        self.seconds += time.perf_counter() - t0


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_data(rng):
    x = rng.normal(size=(N_TRAIN + N_VAL, F)).astype(np.float32)
    w = rng.normal(size=F).astype(np.float32) * (rng.random(F) < 0.5)
    y = np.log1p(np.exp(x @ w * 0.4 + 0.5 * x[:, 0] * x[:, 1] + rng.normal(0, 0.3, len(x)))).astype(np.float32)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((F,))
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="softplus")(h))
    m.compile(optimizer="adam", loss="mae")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t_start = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u41_eval_permimportance_callback_claims_")
    try:
        xt, yt, xv, yv = make_data(np.random.default_rng(SEED))
        steps = N_TRAIN // BATCH
        ds = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=SEED).batch(BATCH, drop_remainder=True)
        m = build_model(); timer = StepTimer(); pi = PermutationImportance(xv, yv)
        m.fit(ds, epochs=EPOCHS, callbacks=[timer, pi], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - t_start
        top = int(np.argmax(pi.history[-1]))
        msg = (f"eval_permimportance_callback_claims: {1.0 / full:.2f} steps/s, importance eval {pi.seconds:.1f}s of "
               f"{wall:.1f}s run so far (top feature {top})")
        if args.truth:
            batch = next(iter(ds))
            m2 = build_model(); t2 = StepTimer(); pi2 = PermutationImportance(xv, yv)
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=steps, callbacks=[t2, pi2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
