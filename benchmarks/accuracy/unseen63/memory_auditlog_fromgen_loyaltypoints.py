"""Retail loyalty programme: predict next-month points redemption.

Input path: a Python generator decodes member activity into dense
per-member feature rows (2048 floats: 52-week x 39-category spend grid plus
profile) and yields whole batches through tf.data.from_generator to model.fit.
Deliberate bottleneck: memory - the generator keeps an "audit log" of every
decoded batch (float64 raw-spend and feature copies plus member ids) that is never trimmed, so host
memory grows by ~8 MiB per step throughout training.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, resource
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 256
STEPS = 70
EPOCHS = 3
WEEKS, CATS = 52, 39
FEAT = WEEKS * CATS + 20  # 2048


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class MemberFeed:
    def __init__(self, seed=63):
        self.rng = np.random.default_rng(seed)
        self.audit_log = []  # grows forever: one float64 copy per decoded batch
        self.cat_w = self.rng.normal(size=CATS).astype(np.float32)
    def decode_batch(self, start):
        spend = self.rng.standard_exponential((BATCH, WEEKS, CATS), dtype=np.float32) * 12.0
        spend *= self.rng.random((BATCH, WEEKS, 1), dtype=np.float32) < 0.35
        profile = self.rng.standard_normal((BATCH, 20), dtype=np.float32)
        x = np.concatenate([np.log1p(spend).reshape(BATCH, -1), profile], axis=1)
        y = (np.log1p(spend[:, -8:, :].sum(axis=(1, 2))) + 0.1 * profile[:, 0]).astype(np.float32)
        # audit trail for the finance team: raw spend grid and decoded features, float64, never trimmed
        self.audit_log.append({"members": np.arange(start, start + BATCH), "raw_spend": spend.astype(np.float64),
                               "features": x.astype(np.float64), "target": y})
        return x, y
    def __call__(self):
        i = 0
        while True:
            yield self.decode_batch(i * BATCH)
            i += 1


def build_model():
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: peak RSS {rss_mib():.0f} MiB", flush=True)
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    sps = timer.sec_per_step()
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, {sps * 1000:.1f} ms/step, "
          f"{1 / sps:.1f} steps/s, peak RSS {rss_mib():.0f} MiB, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    feed = MemberFeed()
    sig = (tf.TensorSpec((BATCH, FEAT), tf.float32), tf.TensorSpec((BATCH,), tf.float32))
    ds = tf.data.Dataset.from_generator(feed, output_signature=sig)
    full = run(ds, "fromgen-auditlog")
    emit({"steps_per_second": 1.0 / full})
    print(f"audit log holds {len(feed.audit_log)} batches")
    if args.truth:
        batch = MemberFeed(seed=1).decode_batch(0)
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
