"""Sea-level science: forecast the non-tidal residual at a tide gauge from the previous
hours of water level, pressure and wind stress.

Input path: all windows are built once in numpy and fed through an in-memory
tf.data pipeline (from_tensor_slices -> shuffle -> batch -> prefetch); the step time is
dominated by a deep dilated temporal convolution network.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 32, 40, 3
WIN, N_WIN = 128, 4096


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def make_windows(rng):
    n = N_WIN + WIN + 1
    t = np.arange(n, dtype=np.float64)
    tide = 1.2 * np.sin(2 * np.pi * t / 12.42) + 0.4 * np.sin(2 * np.pi * t / 12.0) + 0.2 * np.sin(2 * np.pi * t / 25.82)
    pres = np.cumsum(rng.normal(0, 0.3, n)); pres -= pres.mean()
    wind = np.convolve(rng.normal(0, 1, n), np.ones(12) / 12, "same")
    surge = -0.01 * pres + 0.05 * wind + 0.02 * np.roll(wind, 6)
    level = tide + surge + rng.normal(0, 0.02, n)
    feats = np.stack([level, pres / 10, wind, np.sin(2 * np.pi * t / 12.42), np.cos(2 * np.pi * t / 12.42)], -1).astype(np.float32)
    idx = np.arange(N_WIN)[:, None] + np.arange(WIN)[None, :]
    return feats[idx], surge[np.arange(N_WIN) + WIN].astype(np.float32)


def make_model():
    inp = keras.Input((WIN, 5))
    x = keras.layers.Conv1D(48, 1)(inp)
    for d in (1, 2, 4, 8, 16, 32, 1, 2, 4, 8):
        h = keras.layers.Conv1D(48, 3, padding="causal", dilation_rate=d, activation="relu")(x)
        h = keras.layers.Conv1D(48, 1)(h)
        x = keras.layers.Add()([x, h])
    x = keras.layers.Lambda(lambda z: z[:, -1])(x)
    out = keras.layers.Dense(1)(keras.layers.Dense(64, activation="relu")(x))
    return keras.Model(inp, out)


def train(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    x, y = make_windows(np.random.default_rng(72))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=1).repeat().batch(BATCH).prefetch(2)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"dilatedtcn: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if TRUTH:
        comp = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat())
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
