"""Electricity tariff pricing: regress the clearing price of a retail tariff from 96
market, weather and customer-mix features. The whole table is generated in memory and
passed to model.fit as numpy arrays; the model is a dense mixture-of-experts (softmax gate
over eight wide expert MLPs, all experts evaluated and mixed per example)."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, N, FEAT, BATCH, EPOCHS, EXPERTS, HIDDEN = 48, 24576, 96, 256, 3, 8, 512


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


@keras.saving.register_keras_serializable(package="u48")
class DenseMoE(keras.layers.Layer):
    def __init__(self, experts, hidden, units, **kw):
        super().__init__(**kw)
        self.experts, self.hidden, self.units = experts, hidden, units
    def build(self, input_shape):
        d = input_shape[-1]
        self.gate = self.add_weight(shape=(d, self.experts), initializer="glorot_uniform", name="gate")
        self.w1 = self.add_weight(shape=(self.experts, d, self.hidden), initializer="glorot_uniform", name="w1")
        self.b1 = self.add_weight(shape=(self.experts, self.hidden), initializer="zeros", name="b1")
        self.w2 = self.add_weight(shape=(self.experts, self.hidden, self.units), initializer="glorot_uniform", name="w2")
    def call(self, x):
        g = keras.ops.softmax(keras.ops.matmul(x, self.gate))
        h = keras.ops.gelu(keras.ops.einsum("bd,edh->beh", x, self.w1) + self.b1)
        y = keras.ops.einsum("beh,ehu->beu", h, self.w2)
        return keras.ops.einsum("be,beu->bu", g, y)


def make_data():
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((N, FEAT)).astype(np.float32)
    w = rng.standard_normal((FEAT,)).astype(np.float32) / np.sqrt(FEAT)
    y = (np.tanh(x @ w) * 40 + 0.5 * (x[:, 0] > 0) * x[:, 1] ** 2 + rng.normal(0, 0.5, N) + 80).astype(np.float32)
    return x, (y - 80) / 20


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(256, activation="gelu")(inp)
    h = DenseMoE(EXPERTS, HIDDEN, 256)(h)
    h = keras.layers.LayerNormalization()(h)
    h = DenseMoE(EXPERTS, HIDDEN, 128)(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_compute_moe_fit_tariffpricing_")
    try:
        x, y = make_data()
        model = build_model()
        timer = StepTimer()
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = f"moe tariff: loss={hist.history['loss'][-1]:.4f} step={full*1000:.1f}ms main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            batch = (x[:BATCH], y[:BATCH])
            m2 = build_model()
            t2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=N // BATCH, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
