"""Media: ranking podcast episodes for search queries.
Synthetic query/episode feature pairs with graded relevance are generated in memory; a short
model.fit trains a pointwise ranking MLP, and a callback scores a large held-out judged set with
model.predict at every epoch end and computes per-query NDCG@10 in numpy."""
import os, sys, time, json, tempfile, shutil
T_START = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, DIM, N_TRAIN, N_QUERIES, PER_Q = 256, 40, 3, 64, 20480, 16000, 50

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
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

class NDCGCallback(keras.callbacks.Callback):
    def __init__(self, x, rel):
        super().__init__(); self.x, self.rel = x, rel; self.seconds = 0.0; self.history = []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        scores = self.model.predict(self.x, batch_size=512, verbose=0).reshape(N_QUERIES, PER_Q)
        order = np.argsort(-scores, axis=1)[:, :10]
        gains = (2.0 ** np.take_along_axis(self.rel, order, 1) - 1) / np.log2(np.arange(2, 12))
        ideal = (2.0 ** -np.sort(-self.rel, axis=1)[:, :10] - 1) / np.log2(np.arange(2, 12))
        self.history.append(float(np.mean(gains.sum(1) / np.maximum(ideal.sum(1), 1e-9))))
        self.seconds += time.perf_counter() - t

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def make_pairs(rng, w, n):
    x = rng.normal(size=(n, DIM)).astype(np.float32)
    rel = np.clip(np.round(x @ w + rng.normal(0, 0.5, n)), 0, 3)
    return x, rel.astype(np.float32)

def build_model():
    inp = keras.Input((DIM,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out); m.compile(optimizer="adam", loss="mse"); return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_eval_ndcg_callback_podcastsearch_")
    try:
        rng = np.random.default_rng(49); keras.utils.set_random_seed(49)
        w = rng.normal(0, 0.3, DIM).astype(np.float32)
        xtr, ytr = make_pairs(rng, w, N_TRAIN)
        xte, yte = make_pairs(rng, w, N_QUERIES * PER_Q)
        rel = yte.reshape(N_QUERIES, PER_Q)
        ds = tf.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(N_TRAIN, seed=1).repeat().batch(BATCH)
        model = build_model(); timer = StepTimer(); ndcg = NDCGCallback(xte, rel)
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, ndcg], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T_START
        msg = "podcast ranking: NDCG@10 %.3f, %.4f s/step, eval %.1fs of %.1fs (%.0f%%)" % (
            ndcg.history[-1], full, ndcg.seconds, wall, 100 * ndcg.seconds / wall)
        if truth:
            batch = next(iter(ds))
            model2 = build_model(); t2 = StepTimer(); ndcg2 = NDCGCallback(xte, rel)
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2, ndcg2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
