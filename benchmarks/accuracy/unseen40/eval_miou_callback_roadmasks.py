"""Road extraction from aerial tiles: a small fully-convolutional network segments
road / building / background on synthetic 64x64 tiles held in memory. After every
epoch a callback predicts the whole validation archive and computes per-class IoU
and mean IoU in numpy, which is how the team tracks model quality.
"""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
SIZE = 64
N_TRAIN = 256
N_VAL = 5000
N_CLASSES = 3
BATCH = 32
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class MeanIoUCallback(keras.callbacks.Callback):
    def __init__(self, x_val, y_val):
        super().__init__()
        self.x_val, self.y_val = x_val, y_val
        self.seconds, self.history = 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = np.argmax(self.model.predict(self.x_val, batch_size=64, verbose=0), axis=-1)
        ious = []
        for c in range(N_CLASSES):
            inter = np.logical_and(pred == c, self.y_val == c).sum()
            union = np.logical_or(pred == c, self.y_val == c).sum()
            ious.append(inter / max(union, 1))
        self.history.append(float(np.mean(ious)))
        self.seconds += time.perf_counter() - t


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_tiles(n, rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    x = np.empty((n, SIZE, SIZE, 3), np.float32)
    y = np.zeros((n, SIZE, SIZE), np.int32)
    for i in range(n):
        m = np.zeros((SIZE, SIZE), np.int32)
        for _ in range(int(rng.integers(2, 5))):
            x0, y0 = rng.integers(0, SIZE - 12, 2)
            w, h = rng.integers(6, 12, 2)
            m[y0:y0 + h, x0:x0 + w] = 2
        a = rng.uniform(-1, 1)
        b = rng.uniform(0, SIZE)
        m[np.abs(yy - (a * xx + b)) < 3] = 1
        palette = np.array([[0.35, 0.45, 0.3], [0.5, 0.5, 0.5], [0.7, 0.4, 0.35]], np.float32)
        x[i] = palette[m] + 0.08 * rng.normal(size=(SIZE, SIZE, 3))
        y[i] = m
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 3))
    c1 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    p1 = keras.layers.MaxPooling2D()(c1)
    c2 = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(p1)
    p2 = keras.layers.MaxPooling2D()(c2)
    c3 = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(p2)
    u2 = keras.layers.Concatenate()([keras.layers.UpSampling2D()(c3), c2])
    c4 = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(u2)
    u1 = keras.layers.Concatenate()([keras.layers.UpSampling2D()(c4), c1])
    c5 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(u1)
    out = keras.layers.Conv2D(N_CLASSES, 1, activation="softmax")(c5)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    x_tr, y_tr = make_tiles(N_TRAIN, rng)
    x_val, y_val = make_tiles(N_VAL, rng)
    t_fit = time.perf_counter()
    timer, miou = StepTimer(), MeanIoUCallback(x_val, y_val)
    model = build_model()
    model.fit(x_tr, y_tr, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, miou], verbose=0)
    fit_wall = time.perf_counter() - t_fit
    full = timer.seconds_per_step()
    append_out({"steps_per_second": 1.0 / full})
    msg = (f"road masks: {full*1000:.1f} ms/step, mIoU {miou.history[-1]:.3f}, "
           f"epoch-end evaluation {miou.seconds:.1f} s of {fit_wall:.1f} s fit")
    if truth:
        batch = (x_tr[:BATCH], y_tr[:BATCH])
        ctimer = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=N_TRAIN // BATCH,
                          epochs=EPOCHS, callbacks=[ctimer, MeanIoUCallback(x_val, y_val)], verbose=0)
        comp = ctimer.seconds_per_step()
        frac = min(max((full - comp) / full, 0.0), 1.0)
        append_out({"truth_input_fraction": frac})
        msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
