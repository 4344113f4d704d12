"""Pre-flight check for a beehive acoustic-monitoring service (queenless /
swarming / healthy hive states from 1-second mel-spectrogram frames).  The
script imports TensorFlow, inspects the visible devices, builds and compiles
each candidate of a small hyper-parameter grid, and runs a single predict on
a synthetic spectrogram batch to confirm output shapes; nothing is trained."""
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

GRID = [dict(width=w, depth=d, kernel=k) for w in (32, 64) for d in (2, 3) for k in (3, 5)]


def build(width, depth, kernel):
    inp = keras.Input((64, 96, 1), name="mel")
    h = inp
    for i in range(depth):
        h = keras.layers.Conv2D(width * (2 ** i), kernel, padding="same", use_bias=False)(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.Activation("relu")(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dropout(0.3)(h)
    out = keras.layers.Dense(3, activation="softmax", name="hive_state")(h)
    m = keras.Model(inp, out, name="apiary_w%d_d%d_k%d" % (width, depth, kernel))
    m.compile(keras.optimizers.AdamW(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    devices = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    threads = (tf.config.threading.get_intra_op_parallelism_threads(),
               tf.config.threading.get_inter_op_parallelism_threads())
    rng = np.random.default_rng(46)
    probe = rng.normal(size=(16, 64, 96, 1)).astype(np.float32)
    report = []
    for cfg in GRID:
        keras.utils.set_random_seed(1)
        m = build(**cfg)
        p = m.predict(probe, verbose=0)
        assert p.shape == (16, 3) and np.allclose(p.sum(1), 1.0, atol=1e-4)
        report.append((m.name, m.count_params()))
        keras.backend.clear_session()
    biggest = max(report, key=lambda r: r[1])
    print("startup_hparam_grid_preflight_apiary: devices=%s logical=%d threads=%s candidates=%d "
          "largest=%s(%d params) wall=%.1fs" % ([d.device_type for d in devices], len(logical), threads,
                                                len(report), biggest[0], biggest[1], time.perf_counter() - t0))


if __name__ == "__main__":
    main()
