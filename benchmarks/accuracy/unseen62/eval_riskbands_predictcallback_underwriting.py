"""Commercial-property underwriting loss model with a heavy holdout audit.

Data path: in-memory policy features (construction class, occupancy,
sum insured, protection class, prior-loss counts) -> tf.data slices ->
model.fit. At the end of every epoch a callback scores a large regulatory
holdout book (model.predict on 900k policies) and computes per-risk-band
loss ratios, a Gini coefficient and a decile lift table in numpy.
Deliberate bottleneck: the end-of-epoch holdout evaluation.
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 60
EPOCHS = 3
FEAT = 40
HOLDOUT = 900_000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class HoldoutAudit(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds, self.report = x, y, 0.0, None

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.x, batch_size=2048, verbose=0)[:, 0]
        order = np.argsort(-p)
        ys = self.y[order]
        cum = np.cumsum(ys) / ys.sum()
        gini = 2 * (cum.mean() - 0.5)
        deciles = np.array_split(order, 10)
        lift = [float(self.y[d].mean() / self.y.mean()) for d in deciles]
        bands = np.digitize(p, np.quantile(p, np.linspace(0, 1, 21)[1:-1]))
        ratios = [float(self.y[bands == b].sum() / max(p[bands == b].sum(), 1e-6)) for b in range(20)]
        self.report = {"gini": float(gini), "lift_top": lift[0], "band_lr_max": max(ratios)}
        self.seconds += time.perf_counter() - t


def make_data(rng, n):
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    logit = x[:, :8] @ np.linspace(1.0, -0.5, 8).astype(np.float32) - 2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds, hx, hy):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer, audit = StepTimer(), HoldoutAudit(hx, hy)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
    return timer.sec_per_step(), audit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(62)
    x, y = make_data(rng, BATCH * STEPS)
    hx, hy = make_data(rng, HOLDOUT)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full, audit = run(ds, hx, hy)
    eval_s = audit.seconds
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"eval_riskbands_predictcallback_underwriting: {sps:.2f} steps/s ({full*1000:.1f} ms/step), gini {audit.report['gini']:.3f}"
    if args.truth:
        batch = next(iter(ds))
        compute, audit2 = run(tf.data.Dataset.from_tensors(batch).repeat(), hx, hy)
        eval_s += audit2.seconds
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    wall = time.perf_counter() - T0
    print(msg + f", evaluation {eval_s:.1f}s = {100*eval_s/wall:.0f}% of wall {wall:.1f}s")


if __name__ == "__main__":
    main()
