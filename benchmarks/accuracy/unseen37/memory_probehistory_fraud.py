"""Card-fraud scoring with a callback that archives probe-set outputs every epoch.

Training transactions come from an in-memory, cached tf.data pipeline.  To study
how the learned representation drifts, a callback runs the network on a large,
fixed probe set of transactions at the end of every epoch and appends both the
fraud scores and the 128-d penultimate embeddings to a Python list "for later
analysis".  Nothing is ever dropped, so resident memory grows by ~130 MB per
epoch for the whole run.
"""
import argparse, json, os, resource, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 512
STEPS = 60
EPOCHS = 14
N_TRAIN = 60000
N_PROBE = 250000
N_FEAT = 48
EMB = 128


def make_transactions(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, N_FEAT)).astype(np.float32)
    w = rng.standard_normal(N_FEAT) / np.sqrt(N_FEAT)
    logit = x @ w * 2.0 + 0.8 * x[:, 0] * x[:, 1] - 3.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


class ProbeArchive(keras.callbacks.Callback):
    """Keeps every epoch's probe scores and embeddings for a drift report."""
    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        embed = keras.Model(self.model.inputs, self.model.get_layer("embedding").output)
        emb = embed.predict(self.probe, batch_size=4096, verbose=0)
        scores = self.model.predict(self.probe, batch_size=4096, verbose=0)
        self.history.append({"epoch": epoch, "embeddings": emb, "scores": scores,
                             "loss": (logs or {}).get("loss")})


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input((N_FEAT,))
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(EMB, activation="relu", name="embedding")(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N_TRAIN, seed=0).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def train(data, probe):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.AUC(from_logits=True, name="auc")])
    timer, archive = StepTimer(), ProbeArchive(probe)
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, archive], verbose=0)
    drift = float(np.mean(np.abs(archive.history[-1]["scores"] - archive.history[0]["scores"])))
    kept_mb = sum(h["embeddings"].nbytes + h["scores"].nbytes for h in archive.history) / 2**20
    return timer.sec_per_step(), hist.history["auc"][-1], drift, kept_mb


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_memory_probehistory_fraud_")
    try:
        t0 = time.perf_counter()
        x, y = make_transactions(N_TRAIN, 0)
        probe, _ = make_transactions(N_PROBE, 1)
        full, auc, drift, kept_mb = train(make_dataset(x, y), probe)
        emit("steps_per_second", 1.0 / full)
        msg = ("memory_probehistory_fraud: %.1f ms/step, auc %.3f, score drift %.4f, archive %.0f MB, "
               "peak RSS so far %.0f MB" % (full * 1e3, auc, drift, kept_mb,
                                             resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
        if args.truth:
            batch = next(iter(make_dataset(x, y)))
            compute, _, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), probe)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
