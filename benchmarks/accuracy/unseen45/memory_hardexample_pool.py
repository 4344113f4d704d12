"""Sensor anomaly classifier with a hard-example replay pool. In-memory feature rows feed model.fit; a callback appends a float64, 24x-upsampled copy of every batch to a Python list that is never trimmed, so RSS grows steadily through training."""
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

BATCH, STEPS, EPOCHS = 256, 100, 3
rng = np.random.default_rng(45)
X = rng.normal(size=(BATCH * STEPS, 128)).astype(np.float32)
Y = (X[:, :3].sum(1, keepdims=True) > 0).astype(np.float32)


class HardExamplePool(keras.callbacks.Callback):
    """Keeps every batch's inputs plus float64 'upsampled' copies for later hard-example replay; never trimmed."""
    def __init__(self):
        super().__init__()
        self.pool = []

    def on_train_batch_end(self, batch, logs=None):
        i = (self.params_step % STEPS) * BATCH
        self.params_step += 1
        xb = X[i:i + BATCH]
        self.pool.append((xb.astype(np.float64).repeat(24, axis=1), float(logs["loss"])))

    params_step = 0


def build():
    m = keras.Sequential([keras.Input((128,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(45)
    m, timer, pool = build(), StepTimer(), HardExamplePool()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, pool], verbose=0)
    return timer.sec_per_step(), sum(p[0].nbytes for p in pool.pool)


tmp = tempfile.mkdtemp(prefix="u45_memory_hardexample_pool_")
try:
    full, kept = run(tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).repeat())
    emit({"steps_per_second": 1.0 / full})
    msg = f"hardpool full {full*1000:.1f} ms/step pool {kept/2**30:.2f} GiB"
    if TRUTH:
        comp, _ = run(tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
