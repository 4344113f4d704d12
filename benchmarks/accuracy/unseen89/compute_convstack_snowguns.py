"""Snow-gun water-flow sensors: vibration spectrograms of snowmaking-gun
supply lines (held in memory) classified by a Conv2D stack trained with
model.fit over tf.data.from_tensor_slices + prefetch. Compute-bound."""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


H = W = 48
N = 2048
BATCH = 64
STEPS = 40
EPOCHS = 3


def make_spectrograms(seed=89):
    rng = np.random.default_rng(seed)
    freqs = np.linspace(0, 1, H)[:, None]
    t = np.linspace(0, 1, W)[None, :]
    y = rng.integers(0, 4, N)        # ok / nozzle icing / pump cavitation / leak
    x = rng.normal(0, 0.2, (N, H, W)).astype(np.float32)
    for cls, f0 in enumerate([0.2, 0.45, 0.7, 0.9]):
        m = y == cls
        x[m] += np.exp(-((freqs - f0) ** 2) / 0.002) * (1 + 0.3 * np.sin(6 * np.pi * t))
    return x[..., None].astype(np.float32), y.astype(np.int32)


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((H, W, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    model = keras.Model(inp, out, name="snowgun_fault")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t


def main():
    x, y = make_spectrograms()
    # whole batches as slices: the in-memory pipeline does no per-example work
    nb = N // BATCH
    xb = x[:nb * BATCH].reshape(nb, BATCH, H, W, 1)
    yb = y[:nb * BATCH].reshape(nb, BATCH)
    ds = tf.data.Dataset.from_tensor_slices((xb, yb)).repeat().prefetch(2)
    full, fit_s = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print("snowguns normal: %.4f s/step, fit %.1f s, wall %.1f s" % (full, fit_s, time.perf_counter() - T0))
    if TRUTH:
        comp, _ = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("snowguns truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
