import time; T0 = time.perf_counter()
"""Sleep-posture classifier on mattress pressure maps.

A 32x32 pressure-sensing mat under a pocket-sprung mattress records a frame
per minute; the showroom's "find your firmness" kiosk classifies the posture
(back, side-left, side-right, front).  All frames are synthesised up front,
held in memory as tensors and fed with from_tensor_slices + batch + prefetch
into model.fit of a fairly wide CNN.
Bottleneck: convolution compute (compute-bound).
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

GRID = 32
N = 4096
BATCH = 64
STEPS = 50
EPOCHS = 3
POSTURES = 4


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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def pressure_maps(seed=86):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:GRID, 0:GRID].astype(np.float32)
    y = rng.integers(0, POSTURES, N)
    x = np.zeros((N, GRID, GRID, 1), np.float32)
    width = np.array([6.0, 3.0, 3.0, 5.0])
    shift = np.array([0.0, -5.0, 5.0, 0.0])
    for i in range(N):
        p = y[i]
        cx = GRID / 2 + shift[p] + rng.normal(0, 1)
        torso = np.exp(-((xx - cx) ** 2) / (2 * width[p] ** 2) - ((yy - 12) ** 2) / 60)
        hips = 1.3 * np.exp(-((xx - cx) ** 2) / (2 * (width[p] + 1) ** 2) - ((yy - 20) ** 2) / 20)
        x[i, :, :, 0] = torso + hips + rng.normal(0, 0.05, (GRID, GRID))
    return x, y.astype(np.int32)


def build_model():
    inp = keras.Input((GRID, GRID, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(POSTURES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    x, y = pressure_maps()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=86).repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[mattress] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
