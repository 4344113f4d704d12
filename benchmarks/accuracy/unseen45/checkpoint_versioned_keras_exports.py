"""Ad click-through model exported as a new versioned .keras archive every 4 batches for a canary deployment. In-memory hashed-ID features feed model.fit; a callback calls model.save on the 3.2M-parameter embedding model, and those saves dominate the wall time."""
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

BATCH, STEPS, EPOCHS = 64, 60, 3
SAVE_EVERY = 4
rng = np.random.default_rng(45)
X = rng.integers(0, 50000, size=(BATCH * STEPS, 20)).astype(np.int32)
Y = rng.integers(0, 2, size=(BATCH * STEPS, 1)).astype(np.float32)


class VersionedExport(keras.callbacks.Callback):
    def __init__(self, folder, timer):
        super().__init__()
        self.folder, self.timer, self.v, self.save_s = folder, timer, 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        if batch % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.v += 1
            self.model.save(os.path.join(self.folder, f"ctr_v{self.v:04d}.keras"))
            dt = time.perf_counter() - t
            self.save_s += dt
            if self.timer.last is not None:
                self.timer.last += dt  # bracket: the save is not part of the step gap


def build():
    inp = keras.Input((20,), dtype="int32")
    e = keras.layers.Embedding(50000, 64)(inp)
    h = keras.layers.Dense(128, activation="relu")(keras.layers.Flatten()(e))
    m = keras.Model(inp, keras.layers.Dense(1)(h))
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(ds, folder):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    cb = VersionedExport(folder, timer)
    t0 = time.perf_counter()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, cb], verbose=0)
    return timer.sec_per_step(), cb.save_s, time.perf_counter() - t0


tmp = tempfile.mkdtemp(prefix="u45_checkpoint_versioned_keras_exports_")
try:
    d1 = os.path.join(tmp, "full"); os.makedirs(d1)
    full, saves, fit_s = run(tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).repeat(), d1)
    emit({"steps_per_second": 1.0 / full})
    msg = f"versioned full {full*1000:.1f} ms/step saves {saves:.1f}s of fit {fit_s:.1f}s"
    if TRUTH:
        d2 = os.path.join(tmp, "truth"); os.makedirs(d2)
        comp, _, _ = run(tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat(), d2)
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
