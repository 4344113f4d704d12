"""Billing-anomaly scoring: a chronological stream of card transactions goes
through tf.data.Dataset.scan, which keeps per-customer running statistics
(count, Welford mean/variance, EMA, last timestamp) and emits each transaction
with its running features; the stream is then batched into model.fit."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_TX, N_CUST = 256, 200, 3, 200000, 512


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


def make_stream(rng):
    cust = rng.integers(0, N_CUST, size=N_TX).astype(np.int32)
    ts = np.cumsum(rng.exponential(30.0, size=N_TX)).astype(np.float32)
    scale = rng.lognormal(3.0, 0.7, size=N_CUST)
    amount = (rng.lognormal(0.0, 0.5, size=N_TX) * scale[cust]).astype(np.float32)
    anomalous = rng.random(N_TX) < 0.03
    amount[anomalous] *= rng.uniform(4, 12, size=anomalous.sum()).astype(np.float32)
    mcc = rng.integers(0, 20, size=N_TX).astype(np.int32)
    return cust, ts, amount, mcc, anomalous.astype(np.float32)


def running_features(state, tx):
    count, mean, m2, ema, last_ts = state
    c, ts, amt, mcc, y = tx["cust"], tx["ts"], tx["amount"], tx["mcc"], tx["label"]
    idx = tf.reshape(c, [1, 1])
    n_old = count[c]; mu_old = mean[c]
    n_new = n_old + 1.0
    delta = amt - mu_old
    mu_new = mu_old + delta / n_new
    m2_new = m2[c] + delta * (amt - mu_new)
    ema_new = tf.where(n_old > 0, 0.9 * ema[c] + 0.1 * amt, amt)
    gap = tf.where(n_old > 0, ts - last_ts[c], 0.0)
    std = tf.sqrt(m2_new / tf.maximum(n_new - 1.0, 1.0)) + 1e-3
    feats = tf.stack([
        tf.math.log1p(amt), (amt - mu_old) / std, amt / (ema[c] + 1e-3),
        tf.math.log1p(gap), tf.math.log1p(n_old), tf.math.log1p(std),
    ])
    feats = tf.concat([feats, tf.one_hot(mcc, 20)], 0)
    upd = lambda t, v: tf.tensor_scatter_nd_update(t, idx, tf.reshape(v, [1]))
    new_state = (upd(count, n_new), upd(mean, mu_new), upd(m2, m2_new), upd(ema, ema_new), upd(last_ts, ts))
    return new_state, (feats, y)


def build_dataset(stream):
    cust, ts, amount, mcc, label = stream
    z = tf.zeros([N_CUST], tf.float32)
    ds = tf.data.Dataset.from_tensor_slices(dict(cust=cust, ts=ts, amount=amount, mcc=mcc, label=label))
    ds = ds.scan((z, z, z, z, z), running_features).repeat()
    return ds.batch(BATCH).prefetch(1)


def train(data):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((26,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    ds = build_dataset(make_stream(np.random.default_rng(0)))
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"scan_billing: {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
