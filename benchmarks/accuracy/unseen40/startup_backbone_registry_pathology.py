"""Digital-pathology model registry preflight: before a nightly slide-scoring job,
this script checks which devices TensorFlow sees, builds the candidate backbones the
registry lists (randomly initialised, no weight download), compiles them with their
heads, records parameter counts, and runs one smoke-test prediction on a synthetic
tile batch. Nothing is trained.
"""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 40
TILE = 128
N_CLASSES = 6


def device_report():
    rep = {"tf": tf.__version__, "keras": keras.__version__,
           "physical": [d.device_type for d in tf.config.list_physical_devices()],
           "logical": [d.name for d in tf.config.list_logical_devices()],
           "built_with_cuda": tf.test.is_built_with_cuda()}
    return rep


def with_head(backbone, name):
    inp = keras.Input((TILE, TILE, 3))
    x = backbone(inp)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out, name=name)
    m.compile(optimizer=keras.optimizers.Adam(1e-4), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    keras.utils.set_random_seed(SEED)
    rep = device_report()
    registry = {
        "resnet50_tiles": lambda: keras.applications.ResNet50(include_top=False, weights=None, input_shape=(TILE, TILE, 3)),
        "densenet121_tiles": lambda: keras.applications.DenseNet121(include_top=False, weights=None, input_shape=(TILE, TILE, 3)),
        "mobilenetv3s_tiles": lambda: keras.applications.MobileNetV3Small(include_top=False, weights=None, input_shape=(TILE, TILE, 3)),
    }
    params = {}
    models = {}
    for name, ctor in registry.items():
        m = with_head(ctor(), name)
        params[name] = m.count_params()
        models[name] = m
    tiles = np.random.default_rng(SEED).uniform(0, 255, (4, TILE, TILE, 3)).astype(np.float32)
    probs = models["mobilenetv3s_tiles"].predict(tiles, verbose=0)
    wall = time.perf_counter() - t0
    print(f"preflight ok: devices {rep['physical']}, params "
          + ", ".join(f"{k}={v/1e6:.1f}M" for k, v in params.items())
          + f", smoke predict {probs.shape}, {wall:.1f} s")


if __name__ == "__main__":
    main()
