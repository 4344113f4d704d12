"""E-commerce CTR with a Deep Interest Network (DIN).

Synthetic user behaviour sequences (50 recent item/category ids), a candidate
item and a click label are generated as in-memory NumPy arrays and passed
straight to model.fit. The per-step cost is the DIN local activation unit:
an MLP over [behaviour, candidate, difference, product] at every sequence
position, followed by attention pooling and a Dice-free ReLU MLP head.
"""
import os
import sys
import json
import time
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 45
EPOCHS = 3
N = BATCH * STEPS
SEQ = 50
N_ITEMS = 50000
N_CATS = 500
DIM = 64


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

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


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_data(seed):
    rng = np.random.default_rng(seed)
    hist_items = rng.integers(1, N_ITEMS, (N, SEQ)).astype(np.int32)
    hist_cats = (hist_items % N_CATS).astype(np.int32)
    lengths = rng.integers(5, SEQ + 1, N)
    mask = np.arange(SEQ)[None, :] < lengths[:, None]
    hist_items *= mask
    hist_cats *= mask
    cand = rng.integers(1, N_ITEMS, N).astype(np.int32)
    cand_cat = (cand % N_CATS).astype(np.int32)
    y = ((hist_cats == cand_cat[:, None]).sum(1) > 0).astype(np.float32)
    y = np.where(rng.random(N) < 0.1, 1 - y, y)
    return {"hist_items": hist_items, "hist_cats": hist_cats, "cand": cand, "cand_cat": cand_cat}, y


class LocalActivation(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.d1 = keras.layers.Dense(256, activation="relu")
        self.d2 = keras.layers.Dense(128, activation="relu")
        self.d3 = keras.layers.Dense(1)

    def call(self, keys, query, ids):
        mask = ids > 0
        q = tf.repeat(query[:, None, :], tf.shape(keys)[1], axis=1)
        h = tf.concat([keys, q, keys - q, keys * q], -1)
        w = tf.squeeze(self.d3(self.d2(self.d1(h))), -1)
        w = tf.where(mask, w, tf.fill(tf.shape(w), -1e9))
        w = tf.nn.softmax(w, -1)
        return tf.reduce_sum(keys * w[..., None], 1)


def build_model():
    keras.utils.set_random_seed(23)
    hi = keras.Input((SEQ,), dtype="int32", name="hist_items")
    hc = keras.Input((SEQ,), dtype="int32", name="hist_cats")
    ci = keras.Input((), dtype="int32", name="cand")
    cc = keras.Input((), dtype="int32", name="cand_cat")
    item_emb = keras.layers.Embedding(N_ITEMS, DIM)
    cat_emb = keras.layers.Embedding(N_CATS, DIM // 2)
    keys = keras.layers.Concatenate()([item_emb(hi), cat_emb(hc)])
    query = keras.layers.Concatenate()([item_emb(ci), cat_emb(cc)])
    interest = LocalActivation()(keys, query, hi)
    x = keras.layers.Concatenate()([interest, query, interest * query])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([hi, hc, ci, cc], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


def train(data, batch_size=None):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        x, y = data
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_compute_deepinterest_fit_ecommerce_")
    try:
        t0 = time.perf_counter()
        x, y = make_data(3)
        full, loss = train((x, y))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            batch = ({k: tf.constant(v[:BATCH]) for k, v in x.items()}, tf.constant(y[:BATCH]))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("compute_deepinterest_fit_ecommerce: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
