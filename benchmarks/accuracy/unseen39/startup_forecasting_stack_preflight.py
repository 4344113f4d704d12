"""Pre-flight check for a retail demand-forecasting service before a nightly batch.

The job imports TensorFlow, reports the visible devices and build info, builds
and compiles the three production models (GRU seasonal forecaster, TabTransformer
store-attribute encoder and a text CNN over promo descriptions), and runs one
predict on dummy inputs to check the output shapes. Nothing is trained.
"""
import os, sys, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras


def gru_forecaster():
    inp = keras.Input((168, 6))
    h = keras.layers.GRU(128, return_sequences=True)(inp)
    h = keras.layers.GRU(64)(h)
    out = keras.layers.Dense(24)(h)
    m = keras.Model(inp, out, name="gru_forecaster")
    m.compile(optimizer="adam", loss="mae")
    return m


def store_encoder():
    inp = keras.Input((16,), dtype="int32")
    tok = keras.layers.Embedding(16 * 50, 64)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(4, 16)(tok, tok)
        tok = keras.layers.LayerNormalization()(tok + a)
    out = keras.layers.Dense(32)(keras.layers.GlobalAveragePooling1D()(tok))
    m = keras.Model(inp, out, name="store_encoder")
    m.compile(optimizer="adam", loss="mse")
    return m


def promo_textcnn():
    inp = keras.Input((64,), dtype="int32")
    h = keras.layers.Embedding(30000, 96)(inp)
    h = keras.layers.Conv1D(128, 3, activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    out = keras.layers.Dense(8, activation="softmax")(h)
    m = keras.Model(inp, out, name="promo_textcnn")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u39_startup_forecasting_stack_preflight_")
    try:
        keras.utils.set_random_seed(39)
        devs = tf.config.list_physical_devices()
        info = tf.sysconfig.get_build_info()
        print("devices:", [d.device_type for d in devs], "cuda build:", info.get("is_cuda_build"))
        rng = np.random.default_rng(39)
        shapes = {}
        for build, x in [(gru_forecaster, rng.normal(size=(32, 168, 6)).astype("float32")),
                         (store_encoder, rng.integers(0, 800, (32, 16)).astype("int32")),
                         (promo_textcnn, rng.integers(0, 30000, (32, 64)).astype("int32"))]:
            m = build()
            m.summary(print_fn=lambda *a, **k: None)
            shapes[m.name] = (m.count_params(), m.predict(x, verbose=0).shape)
        print(f"startup_forecasting_stack_preflight: {len(shapes)} models ok "
              f"{shapes} in {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
