"""Salt-marsh habitat mapping from drone multispectral pixels: classify each pixel's 5-band
reflectance plus elevation into marsh / mudflat / water / upland. Pixels are generated in
memory; a short model.fit is monitored by an epoch-end callback that predicts the whole
survey-wide holdout (1.2M pixels) and reports accuracy with bootstrap confidence intervals,
plus a Keras evaluate on a validation split."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, FEAT, CLASSES, BATCH, STEPS, EPOCHS, N_TRAIN, N_HOLD, N_VAL = 48, 12, 4, 256, 40, 6, 10240, 1200000, 60000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class HoldoutBootstrap(keras.callbacks.Callback):
    def __init__(self, x_hold, y_hold, x_val, y_val, n_boot=200):
        super().__init__()
        self.x_hold, self.y_hold, self.x_val, self.y_val, self.n_boot = x_hold, y_hold, x_val, y_val, n_boot
        self.eval_seconds = 0.0
        self.history = []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x_hold, batch_size=1024, verbose=0)
        correct = (probs.argmax(-1) == self.y_hold).astype(np.float32)
        rng = np.random.default_rng(epoch)
        boots = [correct[rng.integers(0, len(correct), len(correct))].mean() for _ in range(self.n_boot // 10)]
        val = self.model.evaluate(self.x_val, self.y_val, batch_size=1024, verbose=0, return_dict=True)
        self.history.append((correct.mean(), np.percentile(boots, 2.5), np.percentile(boots, 97.5), val["loss"]))
        self.eval_seconds += time.perf_counter() - t


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_pixels(n, rng):
    y = rng.integers(0, CLASSES, n)
    centers = np.random.default_rng(SEED).normal(0, 1, (CLASSES, FEAT))
    x = centers[y] + rng.normal(0, 1.1, (n, FEAT))
    return x.astype(np.float32), y.astype(np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(CLASSES, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_eval_bootstrap_ci_callback_saltmarsh_")
    try:
        rng = np.random.default_rng(SEED)
        xt, yt = make_pixels(N_TRAIN, rng)
        xh, yh = make_pixels(N_HOLD, rng)
        xv, yv = make_pixels(N_VAL, rng)
        ds = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=SEED).repeat().batch(BATCH)
        model = build_model()
        timer, boot = StepTimer(), HoldoutBootstrap(xh, yh, xv, yv)
        t_fit = time.perf_counter()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, boot], verbose=0)
        fit_wall = time.perf_counter() - t_fit
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        acc, lo, hi, vloss = boot.history[-1]
        main_wall = time.perf_counter() - T0
        msg = (f"saltmarsh: holdout_acc={acc:.3f} ci=[{lo:.3f},{hi:.3f}] val_loss={vloss:.3f} step={full*1000:.1f}ms "
               f"eval={boot.eval_seconds:.1f}s fit={fit_wall:.1f}s main_wall={main_wall:.1f}s eval_share={boot.eval_seconds/main_wall:.2f}")
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            t2, b2 = StepTimer(), HoldoutBootstrap(xh, yh, xv, yv)
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2, b2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
