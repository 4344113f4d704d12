"""Pre-flight check for a container-port logistics model service.

Before the nightly job, this script inspects the TensorFlow build and devices,
then builds and compiles the three models the service hosts (a container
dwell-time regressor, a berth-schedule sequence encoder and a crane-camera
seal classifier) and runs one smoke-test prediction each on synthetic inputs.
Nothing is trained and nothing is written to disk.
"""
import os
import sys
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42


def dwell_regressor():
    cat = keras.Input((6,), dtype="int32", name="categoricals")
    num = keras.Input((18,), name="numeric")
    e = keras.layers.Embedding(5000, 16)(cat)
    x = keras.layers.Concatenate()([keras.layers.Flatten()(e), num])
    for w in (256, 128, 64):
        x = keras.layers.Dense(w, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    out = keras.layers.Dense(1, name="dwell_hours")(x)
    m = keras.Model([cat, num], out, name="dwell_regressor")
    m.compile(optimizer="adam", loss="huber", metrics=["mae"])
    return m


def berth_encoder():
    inp = keras.Input((96, 12), name="vessel_calls")
    x = keras.layers.Dense(64)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(4, 16)(x, x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, a]))
        f = keras.layers.Dense(128, activation="relu")(x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, keras.layers.Dense(64)(f)]))
    out = keras.layers.Dense(3, activation="softmax", name="slot")(x)
    m = keras.Model(inp, out, name="berth_encoder")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def seal_classifier():
    inp = keras.Input((128, 128, 3), name="crane_crop")
    x = keras.layers.Rescaling(1 / 255.0)(inp)
    for ch in (32, 64, 128):
        x = keras.layers.Conv2D(ch, 3, padding="same", activation="relu")(x)
        x = keras.layers.SeparableConv2D(ch, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(2, activation="softmax", name="seal_ok")(x)
    m = keras.Model(inp, out, name="seal_classifier")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    report = {
        "tf": tf.__version__,
        "keras": keras.__version__,
        "built_with_cuda": tf.test.is_built_with_cuda(),
        "physical": [d.device_type for d in tf.config.list_physical_devices()],
        "logical": [d.name for d in tf.config.list_logical_devices()],
        "threads": (tf.config.threading.get_inter_op_parallelism_threads(),
                    tf.config.threading.get_intra_op_parallelism_threads()),
    }
    models = [dwell_regressor(), berth_encoder(), seal_classifier()]
    inputs = [
        [rng.integers(0, 5000, (64, 6)).astype(np.int32), rng.standard_normal((64, 18)).astype(np.float32)],
        rng.standard_normal((16, 96, 12)).astype(np.float32),
        rng.integers(0, 255, (8, 128, 128, 3)).astype(np.float32),
    ]
    params = 0
    for m, x in zip(models, inputs):
        lines = []
        m.summary(print_fn=lambda s, **kw: lines.append(s))
        pred = m.predict(x, verbose=0)
        assert np.all(np.isfinite(pred)), m.name
        params += m.count_params()
    print("preflight ok: tf %s keras %s devices=%s models=%d params=%d wall=%.1fs" % (
        report["tf"], report["keras"], ",".join(report["physical"]), len(models), params,
        time.perf_counter() - T0))


if __name__ == "__main__":
    main()
