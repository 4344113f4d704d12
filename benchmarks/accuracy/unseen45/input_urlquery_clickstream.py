"""E-commerce conversion: predict purchase from a session's clicked URLs. Each session's URLs are split with urllib.parse (path segments, parse_qs query params, unquote_plus) and hashed with zlib.crc32 into a bag-of-features vector in Python, trained with model.train_on_batch in a Python loop."""
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

BATCH, STEPS, EPOCHS = 64, 160, 3
HASH = 4096
from urllib.parse import urlsplit, parse_qs, unquote_plus
import zlib
rng = np.random.default_rng(45)
WORDS = ["shoes", "red", "sale", "laptop", "usb c", "kids", "garden", "tent", "phone case", "coffee"]


def make_url(r):
    q = "&".join([f"q={WORDS[r.integers(0,10)].replace(' ', '+')}", f"page={r.integers(1,9)}",
                  f"utm_source={['mail','ads','social'][r.integers(0,3)]}", f"ref=%2Fcat%2F{r.integers(0,500)}",
                  f"sid={r.integers(0, 1<<30):x}"] + [f"f{k}={r.integers(0,50)}" for k in range(int(r.integers(3, 12)))])
    return f"https://shop.example.com/{['search','p','cat'][r.integers(0,3)]}/{r.integers(0,9999)}?{q}"


CLICKS = [[make_url(rng) for _ in range(12)] for _ in range(800)]
LAB = rng.integers(0, 2, 800).astype(np.float32)


def featurize(urls):
    v = np.zeros(HASH, np.float32)
    for u in urls:
        parts = urlsplit(u)
        for seg in parts.path.split("/"):
            v[zlib.crc32(("p:" + seg).encode()) % HASH] += 1
        for k, vals in parse_qs(parts.query).items():
            for val in vals:
                for tok in unquote_plus(val).split():
                    v[zlib.crc32(f"{k}={tok}".encode()) % HASH] += 1
    return np.log1p(v)


def get_batch(i):
    idx = [(i * BATCH + k) % len(CLICKS) for k in range(BATCH)]
    return np.stack([featurize(CLICKS[j]) for j in idx]), LAB[idx][:, None]


def build():
    m = keras.Sequential([keras.Input((HASH,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(getter):
    keras.utils.set_random_seed(45)
    m = build()
    gaps = []
    for e in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = getter(e * STEPS + s)
            lv = float(m.train_on_batch(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    return float(np.mean(gaps[5:]))


tmp = tempfile.mkdtemp(prefix="u45_input_urlquery_clickstream_")
try:
    full = run(get_batch)
    emit({"steps_per_second": 1.0 / full})
    msg = f"urlquery full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = get_batch(0)
        comp = run(lambda i: fixed)
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
