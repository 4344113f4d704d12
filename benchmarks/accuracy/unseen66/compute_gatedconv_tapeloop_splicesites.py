"""Genomics: splice-site predictor (donor/acceptor/none) over one-hot DNA
windows with a stack of gated dilated residual Conv1D blocks, trained by a
custom tf.GradientTape loop. Data is pre-encoded in memory; each step only
slices numpy arrays. Deliberate bottleneck: compute."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, WIN, CH, BLOCKS = 32, 60, 200, 32, 4


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_data(n, seed=66):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 4, (n, WIN))
    y = rng.integers(0, 3, n).astype(np.int32)
    idx[y == 1, WIN // 2:WIN // 2 + 2] = [2, 3]   # GT donor motif
    idx[y == 2, WIN // 2 - 2:WIN // 2] = [0, 2]   # AG acceptor motif
    x = np.eye(4, dtype=np.float32)[idx]
    return x, y


class GatedBlock(keras.layers.Layer):
    def __init__(self, ch, dil, **kw):
        super().__init__(**kw)
        self.f = keras.layers.Conv1D(ch, 5, padding="same", dilation_rate=dil)
        self.g = keras.layers.Conv1D(ch, 5, padding="same", dilation_rate=dil)
        self.o = keras.layers.Conv1D(ch, 1)
    def call(self, x):
        return x + self.o(keras.ops.tanh(self.f(x)) * keras.ops.sigmoid(self.g(x)))


def build_model():
    inp = keras.Input((WIN, 4))
    h = keras.layers.Conv1D(CH, 1)(inp)
    for b in range(BLOCKS):
        h = GatedBlock(CH, 2 ** (b % 4))(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(3)(h))


def run(batch_fn):
    keras.utils.set_random_seed(66)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for s in range(STEPS):
        x, y = batch_fn(s)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    x, y = make_data(BATCH * STEPS)
    full, loss = run(lambda s: (x[s * BATCH:(s + 1) * BATCH], y[s * BATCH:(s + 1) * BATCH]))
    emit({"steps_per_second": 1.0 / full})
    msg = f"[compute_gatedconv_tapeloop_splicesites] full {full*1000:.1f} ms/step loss {loss:.3f}"
    if TRUTH:
        fx, fy = x[:BATCH], y[:BATCH]
        comp, _ = run(lambda s: (fx, fy))
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
