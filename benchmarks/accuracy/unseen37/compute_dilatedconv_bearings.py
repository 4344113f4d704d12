"""Bearing-fault classification from multichannel vibration windows (WaveNet-style).

Vibration windows are generated once into numpy arrays and served from memory
by a cached, prefetched tf.data pipeline, so input is cheap.  The model is a
stack of gated, dilated causal Conv1D residual blocks (dilations 1..128) with
skip connections, trained with model.fit: the convolutions dominate each step.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 16
STEPS = 50
EPOCHS = 3
N_WINDOWS = 2048
LENGTH = 512
CHANNELS = 6
WIDTH = 48
DILATIONS = [1, 2, 4, 8, 16, 32, 64, 128]
N_CLASSES = 5


def make_windows(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(LENGTH, dtype=np.float32) / 2048.0
    y = rng.integers(0, N_CLASSES, N_WINDOWS)
    base = rng.uniform(20, 40, (N_WINDOWS, 1, 1))
    fault = np.array([0.0, 3.1, 5.4, 7.9, 11.2], np.float32)[y][:, None, None]
    phase = rng.uniform(0, 2 * np.pi, (N_WINDOWS, 1, CHANNELS))
    x = np.sin(2 * np.pi * base * t[None, :, None] + phase)
    x += (fault > 0) * 0.6 * np.sin(2 * np.pi * base * fault * t[None, :, None]) ** 9
    x += 0.5 * rng.standard_normal((N_WINDOWS, LENGTH, CHANNELS))
    return x.astype(np.float32), y.astype(np.int32)


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N_WINDOWS, seed=0).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


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
    inp = keras.Input((LENGTH, CHANNELS))
    h = keras.layers.Conv1D(WIDTH, 1)(inp)
    skips = []
    for d in DILATIONS:
        f = keras.layers.Conv1D(WIDTH, 2, dilation_rate=d, padding="causal", activation="tanh")(h)
        g = keras.layers.Conv1D(WIDTH, 2, dilation_rate=d, padding="causal", activation="sigmoid")(h)
        z = keras.layers.Multiply()([f, g])
        skips.append(keras.layers.Conv1D(WIDTH, 1)(z))
        h = keras.layers.Add()([h, keras.layers.Conv1D(WIDTH, 1)(z)])
    s = keras.layers.Activation("relu")(keras.layers.Add()(skips))
    s = keras.layers.Conv1D(WIDTH, 1, activation="relu")(s)
    s = keras.layers.GlobalAveragePooling1D()(s)
    return keras.Model(inp, keras.layers.Dense(N_CLASSES)(s))


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_compute_dilatedconv_bearings_")
    try:
        t0 = time.perf_counter()
        x, y = make_windows()
        full, hist = train(make_dataset(x, y))
        emit("steps_per_second", 1.0 / full)
        msg = "compute_dilatedconv_bearings: %.1f ms/step, acc %.3f" % (full * 1e3, hist["accuracy"][-1])
        if args.truth:
            batch = next(iter(make_dataset(x, y)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
