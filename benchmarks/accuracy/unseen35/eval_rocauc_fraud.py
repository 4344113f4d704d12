"""Payment-fraud model: a small MLP trains on a balanced sample while a
callback scores the full hold-out month (hundreds of thousands of
transactions) with model.predict at every epoch end and computes ROC AUC in
NumPy. The per-epoch scoring dominates the wall time."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_TEST, N_FEAT = 256, 40, 10, 1000000, 32


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last, self.n = [], None, 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None and self.n >= 5:
            self.gaps.append(now - self.last)
        self.last = now; self.n += 1
    def sec_per_step(self):
        return float(np.mean(self.gaps))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def roc_auc(y, score):
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score)); ranks[order] = np.arange(1, len(score) + 1)
    # average ranks for ties
    s_sorted = score[order]
    _, first, counts = np.unique(s_sorted, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    n_pos = y.sum(); n_neg = len(y) - n_pos
    return (ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


class HoldoutAUC(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__(); self.x, self.y, self.seconds, self.history = x, y, 0.0, []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        scores = self.model.predict(self.x, batch_size=1024, verbose=0).ravel()
        self.history.append(roc_auc(self.y, scores))
        self.seconds += time.perf_counter() - t


def make_data(n, rng, w):
    x = rng.normal(size=(n, N_FEAT)).astype(np.float32)
    logit = x @ w + 0.5 * x[:, 0] * x[:, 1] - 4.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def train(data, x_test, y_test):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    timer, auc = StepTimer(), HoldoutAUC(x_test, y_test)
    t = time.perf_counter()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, auc], verbose=0)
    return timer.sec_per_step(), auc, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    w = rng.normal(size=N_FEAT).astype(np.float32) * 0.6
    x_tr, y_tr = make_data(60000, rng, w)
    x_te, y_te = make_data(N_TEST, rng, w)
    ds = (tf.data.Dataset.from_tensor_slices((x_tr, y_tr[:, None])).batch(BATCH, drop_remainder=True)
          .cache().shuffle(256).repeat().prefetch(2))
    full, auc, fit_s = train(ds, x_te, y_te)
    emit({"steps_per_second": 1.0 / full})
    msg = (f"rocauc_fraud: {full*1000:.1f} ms/step, final AUC {auc.history[-1]:.3f}, "
           f"eval {auc.seconds:.1f}s of fit {fit_s:.1f}s ({100*auc.seconds/fit_s:.0f}%)")
    if args.truth:
        batch = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), x_te, y_te)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
