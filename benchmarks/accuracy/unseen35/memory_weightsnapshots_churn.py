"""Subscriber-churn model with a "weight history" callback that a user added
to plot how weights evolve: it appends model.get_weights() (a full NumPy copy
of every kernel and bias) after every batch and never drops old entries, so
resident memory grows steadily through training."""
import argparse, gc, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_FEAT = 256, 100, 5, 64


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


class WeightHistory(keras.callbacks.Callback):
    """Keeps every intermediate weight set 'for later analysis'."""
    def __init__(self):
        super().__init__(); self.snapshots = []
    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append(self.model.get_weights())


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024


def build_model():
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    timer, history = StepTimer(), WeightHistory()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, history], verbose=0)
    end_rss = rss_mib()
    n = len(history.snapshots)
    return timer.sec_per_step(), n, end_rss


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50000, N_FEAT)).astype(np.float32)
    y = ((x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(size=50000)) > 1.0).astype(np.float32)[:, None]
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True)
          .cache().shuffle(195).repeat().prefetch(2))
    full, n, end_rss = train(ds)
    gc.collect()
    emit({"steps_per_second": 1.0 / full})
    msg = f"weightsnapshots_churn: {full*1000:.1f} ms/step, {n} snapshots, RSS at end of fit {end_rss:.0f} MiB"
    if args.truth:
        batch = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
