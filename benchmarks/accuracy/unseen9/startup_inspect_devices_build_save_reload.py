"""Environment sanity check before a long job: no training at all.

Imports TensorFlow, prints version / build info / devices / threading config, builds a few
models (a Keras application backbone with random weights, a small text classifier, a U-Net-ish
segmenter), compiles them, prints summaries, round-trips one through .keras save/load and runs a
single predict to check the reloaded outputs match.
"""

import os
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf


def describe_environment():
    print("TensorFlow", tf.__version__, "| Keras", keras.__version__)
    info = tf.sysconfig.get_build_info()
    print("built with CUDA:", info.get("is_cuda_build"), "| ROCm:", info.get("is_rocm_build"))
    for kind in ("CPU", "GPU"):
        devs = tf.config.list_physical_devices(kind)
        print(f"{kind}: {len(devs)}", [d.name for d in devs])
    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])
    print(
        "threads: intra",
        tf.config.threading.get_intra_op_parallelism_threads(),
        "inter",
        tf.config.threading.get_inter_op_parallelism_threads(),
    )
    print("float policy:", keras.mixed_precision.global_policy().name)
    print("eager:", tf.executing_eagerly(), "| cpu count:", os.cpu_count())


def backbone_classifier():
    base = keras.applications.MobileNetV2(
        input_shape=(160, 160, 3), include_top=False, weights=None
    )
    inp = keras.Input((160, 160, 3))
    h = base(inp)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(5, activation="softmax")(h)
    m = keras.Model(inp, out, name="flowers_mobilenet")
    m.compile(keras.optimizers.Adam(1e-4), "sparse_categorical_crossentropy", ["accuracy"])
    return m


def text_classifier():
    m = keras.Sequential(
        [
            keras.Input((200,), dtype="int32"),
            keras.layers.Embedding(30000, 128),
            keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True)),
            keras.layers.GlobalMaxPooling1D(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ],
        name="ticket_triage",
    )
    m.compile("adam", "binary_crossentropy", ["accuracy"])
    return m


def small_unet():
    inp = keras.Input((128, 128, 1))
    skips, h = [], inp
    for f in (32, 64, 128):
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        skips.append(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(256, 3, padding="same", activation="relu")(h)
    for f, s in zip((128, 64, 32), reversed(skips), strict=True):
        h = keras.layers.Conv2DTranspose(f, 2, strides=2)(h)
        h = keras.layers.Concatenate()([h, s])
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(h)
    m = keras.Model(inp, out, name="cell_unet")
    m.compile("adam", "binary_crossentropy", [keras.metrics.MeanIoU(2)])
    return m


def main():
    t0 = time.perf_counter()
    describe_environment()
    models = [backbone_classifier(), text_classifier(), small_unet()]
    big = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3), classes=12)
    big.compile("sgd", "sparse_categorical_crossentropy")
    print(f"{big.name}: {big.count_params():,} params, {len(big.layers)} layers")
    for m in models:
        m.summary(line_length=100)
        print(f"{m.name}: {m.count_params():,} params")

    unet = models[2]
    path = os.path.join(tempfile.mkdtemp(prefix="startup_"), "unet.keras")
    unet.save(path)
    print("saved", path, f"{os.path.getsize(path) / 1e6:.1f} MB")
    reloaded = keras.models.load_model(path)
    probe = np.random.default_rng(0).random((2, 128, 128, 1), dtype=np.float32)
    a = unet.predict(probe, verbose=0)
    b = reloaded.predict(probe, verbose=0)
    print("reload max abs diff:", float(np.max(np.abs(a - b))))
    clf = models[0]
    wpath = path.replace("unet.keras", "flowers.weights.h5")
    clf.save_weights(wpath)
    clone = backbone_classifier()
    clone.load_weights(wpath)
    img = np.random.default_rng(1).random((1, 160, 160, 3), dtype=np.float32)
    print("top class:", int(np.argmax(clone.predict(img, verbose=0))))
    print(f"startup checks done in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
