"""Insurance loss-reserve development (IBNR) regression, compute bound.

Data path: in-memory numpy arrays of policy/claim-cohort features (accident
year, development lag, paid/incurred triangles flattened, line of business
one-hot) converted once with tf.data.Dataset.from_tensor_slices -> batch ->
repeat -> prefetch and fed to model.fit. The model is a deep residual MLP
(width 1024, 6 residual blocks with LayerNormalization).
Deliberate bottleneck: model compute; the input pipeline is trivial.
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
STEPS = 40
EPOCHS = 2
FEAT = 96
WIDTH = 512
BLOCKS = 4


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


def make_data(rng, n):
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    x[:, :10] = np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=n)]
    w = rng.normal(size=(FEAT,)).astype(np.float32) / np.sqrt(FEAT)
    y = (np.exp(0.3 * x @ w) + 0.1 * rng.normal(size=n)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(WIDTH, activation="relu")(inp)
    for _ in range(BLOCKS):
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.Dense(WIDTH, activation="gelu")(h)
        h = keras.layers.Dense(WIDTH)(h)
        x = keras.layers.Add()([x, h])
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_data(np.random.default_rng(62), BATCH * STEPS)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full = run(ds)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"compute_resmlp_fit_actuarialreserves: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
