"""Pre-flight check for a city traffic-camera analytics stack.

Before a nightly job is scheduled, this script imports TensorFlow, lists the
visible devices and their details, builds and compiles the three models the
stack serves (a frame-level vehicle counter, a clip-level incident classifier
over stacked frames and a plate-region detector head), runs one warm-up
predict on a zero batch for each and prints a parameter report; it trains
nothing and touches no data on disk.
"""
import os
import shutil
import tempfile
import time

t0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def counter_model():
    inp = keras.Input((224, 224, 3), name="frame")
    x = keras.layers.Rescaling(1 / 255.0)(inp)
    for f in (32, 64, 128, 256):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(1, activation="softplus", name="count")(x)
    return keras.Model(inp, out, name="vehicle_counter")


def incident_model():
    inp = keras.Input((8, 112, 112, 3), name="clip")
    x = keras.layers.TimeDistributed(keras.layers.Conv2D(32, 3, strides=2, activation="relu"))(inp)
    x = keras.layers.TimeDistributed(keras.layers.Conv2D(64, 3, strides=2, activation="relu"))(x)
    x = keras.layers.TimeDistributed(keras.layers.GlobalAveragePooling2D())(x)
    x = keras.layers.GRU(128)(x)
    out = keras.layers.Dense(5, name="incident")(x)
    return keras.Model(inp, out, name="incident_classifier")


def plate_model():
    inp = keras.Input((256, 256, 3), name="frame")
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inp)
    skips = []
    for f in (64, 128, 256):
        x = keras.layers.SeparableConv2D(f, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = keras.layers.MaxPooling2D()(x)
    for f, s in zip((256, 128, 64), reversed(skips)):
        x = keras.layers.UpSampling2D()(x)
        x = keras.layers.Concatenate()([x, s])
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    boxes = keras.layers.Conv2D(4, 1, name="boxes")(x)
    score = keras.layers.Conv2D(1, 1, activation="sigmoid", name="score")(x)
    return keras.Model(inp, [boxes, score], name="plate_detector")


def main():
    tmp = tempfile.mkdtemp(prefix="u54_startup_videostack_preflight_trafficcams_")
    try:
        devices = tf.config.list_physical_devices()
        logical = tf.config.list_logical_devices()
        info = [f"{d.device_type}:{d.name}" for d in devices]
        gpus = tf.config.list_physical_devices("GPU")
        built = tf.sysconfig.get_build_info()
        report = []
        for fn, shape, loss in ((counter_model, (2, 224, 224, 3), "mse"),
                                (incident_model, (2, 8, 112, 112, 3), "sparse_categorical_crossentropy"),
                                (plate_model, (2, 256, 256, 3), ["mse", "binary_crossentropy"])):
            m = fn()
            m.compile(optimizer=keras.optimizers.AdamW(1e-3), loss=loss)
            out = m.predict(np.zeros(shape, np.float32), verbose=0)
            outs = out if isinstance(out, list) else [out]
            report.append(f"{m.name}={m.count_params()}p/{[tuple(o.shape) for o in outs]}")
        print(f"startup_videostack_preflight_trafficcams: devices {info} ({len(logical)} logical, "
              f"{len(gpus)} GPU, cuda={built.get('is_cuda_build')}), models {'; '.join(report)}, "
              f"wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
