"""Pre-market preflight for an intraday power-trading desk's forecasting service.
Before the market opens the service imports TensorFlow, inspects the visible devices, builds and
compiles its three models (LSTM price forecaster with quantile heads, wind-output MLP, load CNN),
and runs one smoke-test predict on a small synthetic feature frame; nothing is trained.
"""
import os, sys, json, time, tempfile, shutil
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 44
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def pinball(q):
    def loss(y, p):
        e = y - p
        return keras.ops.mean(keras.ops.maximum(q * e, (q - 1) * e))
    loss.__name__ = "pinball_%02d" % int(q * 100)
    return loss


def price_forecaster():
    inp = keras.Input((96, 14), name="market_frame")
    h = keras.layers.LSTM(128, return_sequences=True)(inp)
    h = keras.layers.LSTM(64)(h)
    outs = [keras.layers.Dense(24, name="q%02d" % int(q * 100))(h) for q in QUANTILES]
    m = keras.Model(inp, outs, name="price_quantiles")
    m.compile(optimizer="adam", loss=[pinball(q) for q in QUANTILES])
    return m


def wind_mlp():
    m = keras.Sequential([keras.Input((40,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dropout(0.1), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(48)], name="wind_output")
    m.compile(optimizer="adam", loss="mae")
    return m


def load_cnn():
    inp = keras.Input((168, 6))
    h = keras.layers.Conv1D(64, 7, padding="causal", activation="relu")(inp)
    h = keras.layers.Conv1D(64, 7, padding="causal", dilation_rate=2, activation="relu")(h)
    h = keras.layers.Conv1D(64, 7, padding="causal", dilation_rate=4, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    m = keras.Model(inp, keras.layers.Dense(24)(h), name="load_cnn")
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u44_startup_quantile_heads_preflight_energytrading_")
    try:
        keras.utils.set_random_seed(SEED)
        devices = tf.config.list_physical_devices()
        logical = tf.config.list_logical_devices()
        gpus = tf.config.list_physical_devices("GPU")
        info = {"tf": tf.__version__, "keras": keras.__version__, "devices": [d.name for d in devices],
                "logical": len(logical), "gpu": len(gpus), "threads": tf.config.threading.get_inter_op_parallelism_threads()}
        models = [price_forecaster(), wind_mlp(), load_cnn()]
        rng = np.random.default_rng(SEED)
        params = 0
        for m in models:
            params += m.count_params()
        p = models[0].predict(rng.normal(size=(8, 96, 14)).astype(np.float32), verbose=0)
        w = models[1].predict(rng.normal(size=(8, 40)).astype(np.float32), verbose=0)
        l = models[2].predict(rng.normal(size=(8, 168, 6)).astype(np.float32), verbose=0)
        ok = all(np.all(np.isfinite(a)) for a in list(p) + [w, l])
        with open(os.path.join(tmp, "preflight.json"), "w") as f:
            json.dump(dict(info, params=params, ok=bool(ok)), f)
        print("startup_quantile_heads_preflight_energytrading: %d devices, %d models, %d params, smoke ok=%s, %.1f s"
              % (len(devices), len(models), params, ok, time.perf_counter() - T0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
