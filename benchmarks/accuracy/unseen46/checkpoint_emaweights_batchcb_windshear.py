"""Low-level wind-shear alerting at an airport from Doppler lidar scans: each
sample is a 64-gate x 16-beam radial-velocity sweep (generated in memory).
During a short model.fit a callback, every second batch, folds the live
weights into an exponential-moving-average shadow model and writes both the live model (.keras
archive) and the EMA shadow weights (.weights.h5) to a checkpoint folder, so
file saves take most of the wall time."""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N, EVERY = 32, 30, 3, 4096, 2


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


class EMACheckpointer(keras.callbacks.Callback):
    """Times each step up to the end of training for that batch, then (every
    EVERY batches) does the EMA fold and the saves, and restarts the step clock afterwards, so the
    saves fall outside the timed gaps."""
    def __init__(self, folder, shadow, decay=0.99):
        super().__init__(); self.folder, self.shadow, self.decay = folder, shadow, decay
        self.gaps, self.last, self.save_seconds, self.n = [], None, 0.0, 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        if batch % EVERY == 0:
            ts = time.perf_counter()
            self.shadow.set_weights([self.decay * s + (1 - self.decay) * m for s, m in
                                     zip(self.shadow.get_weights(), self.model.get_weights())])
            self.model.save(os.path.join(self.folder, "live_%03d.keras" % (self.n % 4)))
            self.shadow.save_weights(os.path.join(self.folder, "ema_%03d.weights.h5" % (self.n % 4)))
            self.n += 1
            self.save_seconds += time.perf_counter() - ts
        self.last = time.perf_counter()
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build():
    keras.utils.set_random_seed(41)
    inp = keras.Input((64, 16, 1))
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.Flatten()(h)
    h = keras.layers.Dense(768, activation="relu")(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(2)(h))
    m.compile(keras.optimizers.Adam(1e-3),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def make_data(rng):
    r = np.linspace(0, 1, 64)[None, :, None]
    shear = rng.integers(0, 2, N)
    v = rng.normal(0, 1.5, (N, 64, 16)) + 8 * r
    v += shear[:, None, None] * (-12 * np.exp(-((r - rng.uniform(0.2, 0.8, (N, 1, 1))) / 0.05) ** 2))
    return v[..., None].astype(np.float32) / 10.0, shear.astype(np.int32)


def run(folder, data):
    model = build()
    shadow = keras.models.clone_model(model)
    shadow.set_weights(model.get_weights())
    cb = EMACheckpointer(folder, shadow)
    t = time.perf_counter()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return cb, hist, time.perf_counter() - t


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_checkpoint_emaweights_batchcb_windshear_")
    try:
        rng = np.random.default_rng(46)
        x, y = make_data(rng)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=1).repeat().batch(BATCH)
        t0 = time.perf_counter()
        cb, hist, fit_wall = run(tmp, ds)
        full = cb.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = "acc=%.3f sec/step=%.4f saves=%d save_share_of_fit=%.2f" % (
            hist.history["accuracy"][-1], full, cb.n, cb.save_seconds / fit_wall)
        if truth:
            xb, yb = next(iter(ds))
            cb2, _, _ = run(tmp, tf.data.Dataset.from_tensors((xb, yb)).repeat())
            comp = cb2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("checkpoint_emaweights_batchcb_windshear: %s wall=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
