"""Fabric texture classification for a textile mill: procedurally generated weave,
knit and twill swatches held entirely in memory as numpy arrays. A ConvMixer (patch
embedding followed by depthwise/pointwise mixing blocks with residuals) is trained
with model.fit directly on the arrays, so each step is dominated by the convolutions.
"""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
SIZE = 64
N = 2048
N_CLASSES = 4
BATCH = 32
EPOCHS = 3
STEPS = 40
DIM, DEPTH, KERNEL, PATCH = 128, 4, 7, 4


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


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_textures():
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    y = rng.integers(0, N_CLASSES, N).astype(np.int32)
    x = np.empty((N, SIZE, SIZE, 3), np.float32)
    for i in range(N):
        f = rng.uniform(0.3, 0.8)
        ph = rng.uniform(0, 2 * np.pi, 2)
        if y[i] == 0:
            base = np.sin(f * xx + ph[0]) * np.sin(f * yy + ph[1])
        elif y[i] == 1:
            base = np.sin(f * (xx + yy) + ph[0])
        elif y[i] == 2:
            base = np.sin(f * xx + ph[0]) + 0.5 * np.sin(2 * f * yy + ph[1])
        else:
            base = np.sign(np.sin(f * xx + ph[0])) * np.sign(np.sin(f * yy + ph[1]))
        col = rng.uniform(0.3, 1.0, 3)
        x[i] = base[..., None] * col + 0.3 * rng.normal(size=(SIZE, SIZE, 1))
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(DIM, PATCH, strides=PATCH)(inp)
    x = keras.layers.Activation("gelu")(x)
    x = keras.layers.BatchNormalization()(x)
    for _ in range(DEPTH):
        r = x
        x = keras.layers.DepthwiseConv2D(KERNEL, padding="same")(x)
        x = keras.layers.Activation("gelu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.Add()([x, r])
        x = keras.layers.Conv2D(DIM, 1)(x)
        x = keras.layers.Activation("gelu")(x)
        x = keras.layers.BatchNormalization()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.AdamW(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    x, y = make_textures()
    timer = StepTimer()
    model = build_model()
    n = STEPS * BATCH
    hist = model.fit(x[:n], y[:n], batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0).history
    full = timer.seconds_per_step()
    append_out({"steps_per_second": 1.0 / full})
    msg = f"convmixer textures: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
    if truth:
        batch = (x[n:n + BATCH], y[n:n + BATCH])
        ctimer = StepTimer()
        build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS,
                          callbacks=[ctimer], verbose=0)
        comp = ctimer.seconds_per_step()
        frac = min(max((full - comp) / full, 0.0), 1.0)
        append_out({"truth_input_fraction": frac})
        msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
