"""Mineralogy: preflight check for a Raman/XRF spectrum-classification ensemble.

Before a survey run, the service imports TensorFlow, lists the visible devices,
builds and compiles the five ensemble members (a Raman Conv1D net, an XRF
dense net, a fusion model over both spectra, a grain-image CNN and an
EfficientNetB0 grain backbone), runs one
predict on a synthetic mineral sample and prints a parameter report. Nothing is
trained.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 7147
RAMAN_BINS = 1024
XRF_CHANNELS = 2048
N_MINERALS = 24


def raman_net():
    inp = keras.Input((RAMAN_BINS, 1), name="raman")
    x = inp
    for f in (32, 64, 128):
        x = keras.layers.Conv1D(f, 9, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(N_MINERALS, activation="softmax")(x), name="raman_cnn")


def xrf_net():
    inp = keras.Input((XRF_CHANNELS,), name="xrf")
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(N_MINERALS, activation="softmax")(x), name="xrf_mlp")


def fusion_net():
    r = keras.Input((RAMAN_BINS, 1), name="raman")
    f = keras.Input((XRF_CHANNELS,), name="xrf")
    a = keras.layers.Conv1D(32, 7, strides=2, activation="relu")(r)
    a = keras.layers.Conv1D(64, 7, strides=2, activation="relu")(a)
    a = keras.layers.GlobalMaxPooling1D()(a)
    b = keras.layers.Dense(128, activation="relu")(f)
    x = keras.layers.Concatenate()([a, b])
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model([r, f], keras.layers.Dense(N_MINERALS, activation="softmax")(x), name="fusion")


def grain_cnn():
    inp = keras.Input((96, 96, 3), name="grain_rgb")
    x = keras.layers.Rescaling(1 / 255.0)(inp)
    for f in (32, 64, 96, 128):
        x = keras.layers.SeparableConv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(N_MINERALS, activation="softmax")(x), name="grain_cnn")


def grain_backbone():
    base = keras.applications.EfficientNetB0(include_top=False, weights=None, input_shape=(96, 96, 3))
    inp = keras.Input((96, 96, 3), name="grain_rgb")
    x = keras.layers.GlobalAveragePooling2D()(base(inp))
    return keras.Model(inp, keras.layers.Dense(N_MINERALS, activation="softmax")(x), name="grain_effnet")


def main():
    print("tensorflow", tf.__version__, "keras", keras.__version__)
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    print("logical:", [d.name for d in tf.config.list_logical_devices()])
    print("built with cuda:", tf.test.is_built_with_cuda())
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    sample = {
        "raman": rng.random((1, RAMAN_BINS, 1)).astype(np.float32),
        "xrf": rng.poisson(5, (1, XRF_CHANNELS)).astype(np.float32),
        "grain_rgb": rng.integers(0, 255, (1, 96, 96, 3)).astype(np.float32),
    }
    total = 0
    votes = []
    for build in (raman_net, xrf_net, fusion_net, grain_cnn, grain_backbone):
        t = time.perf_counter()
        m = build()
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        feeds = [sample[i.name.split(":")[0]] for i in m.inputs]
        p = m.predict(feeds if len(feeds) > 1 else feeds[0], verbose=0)
        votes.append(p[0])
        total += m.count_params()
        print("%-10s params %8d  build+predict %.2fs  top=%d" % (m.name, m.count_params(),
                                                                time.perf_counter() - t, int(p.argmax())))
        if m.name == "fusion":
            m.summary(print_fn=lambda line, **kw: print("  " + line))
    ens = np.mean(votes, 0)
    print("preflight ok: %d models" % len(votes) + ", %d params, ensemble top mineral %d (p=%.3f), wall %.1fs"
          % (total, int(ens.argmax()), float(ens.max()), time.perf_counter() - T0))


if __name__ == "__main__":
    main()
