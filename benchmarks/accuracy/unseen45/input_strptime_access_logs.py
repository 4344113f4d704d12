"""Web fraud detection: flag bot sessions from raw Apache access-log text. Each session (60 log lines) is parsed in a tf.py_function inside a serial dataset.map, with datetime.strptime timestamp parsing and request/status field splitting, then batched for model.fit."""
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

BATCH, STEPS, EPOCHS = 32, 150, 3
LINES = 60
rng = np.random.default_rng(45)
PATHS = ["/api/cart", "/api/login", "/static/app.js", "/checkout", "/search", "/api/items"]


def make_session(r):
    t0 = 1_700_000_000 + int(r.integers(0, 3e6))
    out = []
    for k in range(LINES):
        t0 += int(r.exponential(20))
        ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(t0))
        out.append(f'10.0.{r.integers(0,255)}.{r.integers(0,255)} - - [{ts}] "GET {PATHS[r.integers(0,6)]} HTTP/1.1" {[200,200,304,404,500][r.integers(0,5)]} {r.integers(100,90000)}')
    return "\n".join(out)


SESS = [make_session(rng) for _ in range(500)]
LAB = rng.integers(0, 2, 500).astype(np.int32)
import datetime


def parse_session(blob):
    feats = np.zeros((LINES, 12), np.float32)
    prev = None
    for k, line in enumerate(blob.numpy().decode().split("\n")):
        ts = line[line.index("[") + 1:line.index("]")]
        dt = datetime.datetime.strptime(ts, "%d/%b/%Y:%H:%M:%S %z")
        req = line.split('"')[1].split()
        status, size = line.split('"')[2].split()
        epoch = dt.timestamp()
        feats[k, 0] = dt.hour / 23.0
        feats[k, 1] = dt.weekday() / 6.0
        feats[k, 2] = 0.0 if prev is None else min(epoch - prev, 300) / 300.0
        feats[k, 3 + PATHS.index(req[1])] = 1.0
        feats[k, 9] = int(status) >= 400
        feats[k, 10] = np.log1p(int(size)) / 12.0
        feats[k, 11] = req[0] == "GET"
        prev = epoch
    return feats


def py_parse(blob, y):
    x = tf.py_function(parse_session, [blob], tf.float32)
    x.set_shape((LINES, 12))
    return x, y


def build():
    inp = keras.Input((LINES, 12))
    h = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    m = keras.Model(inp, keras.layers.Dense(1)(h))
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u45_input_strptime_access_logs_")
try:
    ds = (tf.data.Dataset.from_tensor_slices((SESS, LAB)).repeat()
          .map(py_parse).batch(BATCH))
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"accesslog full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = next(iter(ds))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
