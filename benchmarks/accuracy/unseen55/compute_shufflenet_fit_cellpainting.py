"""Cell biology: predict the mechanism-of-action class of a compound from Cell
Painting crops (five fluorescence channels: DNA, ER, RNA, AGP, mitochondria).

The crops are generated once into an in-memory numpy array and passed straight
to model.fit; the step cost is a hand-written ShuffleNet-v2-style network
(channel split, depthwise convolutions, channel shuffle) on 5-channel 96x96
crops.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N = 512
SIZE = 96
CH = 5
CLASSES = 6
BATCH = 32
EPOCHS = 3
STEPS = N // BATCH


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_crops(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    y = rng.integers(0, CLASSES, N)
    x = rng.normal(0.1, 0.05, (N, SIZE, SIZE, CH)).astype(np.float32)
    for i in range(N):
        for _ in range(6):
            cy, cx = rng.uniform(0.15, 0.85, 2)
            r = rng.uniform(0.04, 0.09) * (1 + 0.15 * y[i])
            blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
            x[i, :, :, 0] += blob * 0.9
            x[i, :, :, 1 + y[i] % 4] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (8 * r * r)) * 0.5
    return x, y


def channel_shuffle(x, groups=2):
    h, w, c = x.shape[1], x.shape[2], x.shape[3]
    x = keras.layers.Reshape((h, w, groups, c // groups))(x)
    x = keras.layers.Permute((1, 2, 4, 3))(x)
    return keras.layers.Reshape((h, w, c))(x)


def shuffle_unit(x, out_ch, stride):
    if stride == 1:
        half = x.shape[-1] // 2
        left = keras.layers.Lambda(lambda t: t[..., :half])(x)
        right = keras.layers.Lambda(lambda t: t[..., half:])(x)
    else:
        left = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", use_bias=False)(x)
        left = keras.layers.BatchNormalization()(left)
        left = keras.layers.Conv2D(out_ch // 2, 1, use_bias=False)(left)
        left = keras.layers.ReLU()(keras.layers.BatchNormalization()(left))
        right = x
    r = keras.layers.Conv2D(out_ch // 2, 1, use_bias=False)(right)
    r = keras.layers.ReLU()(keras.layers.BatchNormalization()(r))
    r = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(r)
    r = keras.layers.BatchNormalization()(r)
    r = keras.layers.Conv2D(out_ch // 2, 1, use_bias=False)(r)
    r = keras.layers.ReLU()(keras.layers.BatchNormalization()(r))
    return channel_shuffle(keras.layers.Concatenate()([left, r]))


def build_model():
    inp = keras.Input((SIZE, SIZE, CH))
    x = keras.layers.Conv2D(24, 3, strides=2, padding="same", use_bias=False)(inp)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for out_ch, repeats in ((64, 2), (128, 3), (256, 1)):
        x = shuffle_unit(x, out_ch, 2)
        for _ in range(repeats):
            x = shuffle_unit(x, out_ch, 1)
    x = keras.layers.Conv2D(384, 1, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(keras.layers.Dropout(0.2)(x))
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.AdamW(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    rng = np.random.default_rng(55)
    x, y = make_crops(rng)
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=2)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "full %.1f ms/step" % (full * 1e3)
    if "--truth" in sys.argv:
        keras.utils.set_random_seed(0)
        model2 = build_model()
        t2 = StepTimer()
        ds = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        model2.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=2)
        comp = t2.sec_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print("compute_shufflenet_fit_cellpainting:", msg)


if __name__ == "__main__":
    main()
