"""Loan approval model with a per-region fairness audit. In-memory applicant features train a small MLP with model.fit; at every epoch end a callback runs model.evaluate and model.predict over eight large holdout slices (96k rows), which dominates wall time."""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

def train_loop(model, opt, loss_fn, get_batch, epochs, steps):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    gaps = []
    for e in range(epochs):
        last = None
        for s in range(steps):
            x, y = get_batch(e * steps + s)
            lv = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return float(np.mean(g))

BATCH, STEPS, EPOCHS = 64, 40, 3
NSLICE, SLICE_N = 8, 12000
rng = np.random.default_rng(45)
X = rng.normal(size=(BATCH * STEPS, 48)).astype(np.float32)
Y = (X[:, :4].sum(1, keepdims=True) > 0).astype(np.float32)
HX = rng.normal(size=(NSLICE * SLICE_N, 48)).astype(np.float32)
HY = (HX[:, :4].sum(1, keepdims=True) > 0).astype(np.float32)


class SliceAudit(keras.callbacks.Callback):
    """Fairness audit: evaluate each applicant-region slice at epoch end."""
    def on_epoch_end(self, epoch, logs=None):
        self.res = {}
        for s in range(NSLICE):
            sl = slice(s * SLICE_N, (s + 1) * SLICE_N)
            self.res[s] = self.model.evaluate(HX[sl], HY[sl], batch_size=256, verbose=0, return_dict=True)
            p = self.model.predict(HX[sl], batch_size=256, verbose=0)


def build():
    m = keras.Sequential([keras.Input((48,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy", keras.metrics.AUC(from_logits=True)])
    return m


def run(ds):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, SliceAudit()], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u45_eval_slicedeval_loans_")
try:
    t0 = time.perf_counter()
    full = run(tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).repeat())
    emit({"steps_per_second": 1.0 / full})
    msg = f"slicedeval full {full*1000:.1f} ms/step fit+audit {time.perf_counter()-t0:.1f}s"
    if TRUTH:
        comp = run(tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
