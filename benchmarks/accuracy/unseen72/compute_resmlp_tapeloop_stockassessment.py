"""Fish stock assessment: a surrogate network mapping survey indices, catch-at-age and
environmental covariates to spawning-stock biomass and recruitment.

Input path: the whole data set is pre-batched into tf.constant tensors before training;
a custom tf.function GradientTape loop picks batch i % n from a Python list, so the step is
dominated by the wide residual MLP.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, WIDTH, BLOCKS = 128, 200, 512, 4
N_AGES, N_YEARS = 12, 30


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_data(rng, n=BATCH * 16):
    f = rng.uniform(0.05, 0.8, (n, 1))
    m = rng.uniform(0.1, 0.4, (n, 1))
    rec = rng.lognormal(0, 0.6, (n, N_YEARS))
    ages = np.arange(N_AGES)[None, :]
    caa = rec[:, :N_AGES] * np.exp(-(f + m) * ages) * f
    survey = rec[:, -N_YEARS:] * np.exp(-m * 2) + rng.normal(0, 0.05, (n, N_YEARS))
    env = rng.normal(0, 1, (n, 8))
    x = np.concatenate([caa, survey, env, f, m], 1).astype(np.float32)
    ssb = (rec[:, :N_AGES] * np.exp(-(f + m) * ages) * (ages > 3)).sum(1)
    y = np.stack([np.log(ssb + 1e-3), np.log(rec[:, -1])], 1).astype(np.float32)
    return x, y


class ResMLP(keras.Model):
    def __init__(self):
        super().__init__()
        self.inp = keras.layers.Dense(WIDTH)
        self.blocks = [(keras.layers.LayerNormalization(), keras.layers.Dense(WIDTH, activation="gelu"),
                        keras.layers.Dense(WIDTH)) for _ in range(BLOCKS)]
        self.out = keras.layers.Dense(2)

    def call(self, x):
        h = self.inp(x)
        for ln, d1, d2 in self.blocks:
            h = h + d2(d1(ln(h)))
        return self.out(h)


def run(batches):
    keras.utils.set_random_seed(7)
    model = ResMLP()
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = batches[i % len(batches)]
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    x, y = make_data(np.random.default_rng(72))
    batches = [(tf.constant(x[i:i + BATCH]), tf.constant(y[i:i + BATCH])) for i in range(0, len(x), BATCH)]
    full, loss = run(batches)
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"resmlp: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), loss {loss:.3f}"
    if TRUTH:
        comp, _ = run(batches[:1])
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
