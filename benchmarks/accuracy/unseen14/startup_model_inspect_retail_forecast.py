"""Quick environment + model sanity check before launching the store-demand forecasting job."""

import platform
import sys
import time

t_start = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

LOOKBACK = 56
HORIZON = 14
N_STORES = 1200
N_ITEMS = 5000
N_COVARIATES = 12


def report_environment():
    print(f"python     {sys.version.split()[0]} on {platform.platform()}")
    print(f"tensorflow {tf.__version__}  keras {keras.__version__}  numpy {np.__version__}")
    build = tf.sysconfig.get_build_info()
    print(
        f"cuda build: {build.get('is_cuda_build', False)}, rocm: {build.get('is_rocm_build', False)}"
    )
    for kind in ("CPU", "GPU"):
        devs = tf.config.list_physical_devices(kind)
        print(f"{kind}: {len(devs)} -> {[d.name for d in devs]}")
    print(f"logical devices: {[d.name for d in tf.config.list_logical_devices()]}")
    print(f"intra/inter op threads: {tf.config.threading.get_intra_op_parallelism_threads()}"
          f"/{tf.config.threading.get_inter_op_parallelism_threads()}")  # fmt: skip
    print(f"float policy: {keras.mixed_precision.global_policy().name}")


def build_forecaster():
    history = keras.Input(shape=(LOOKBACK, 1), name="sales_history")
    covars = keras.Input(shape=(LOOKBACK + HORIZON, N_COVARIATES), name="covariates")
    store = keras.Input(shape=(1,), dtype="int32", name="store_id")
    item = keras.Input(shape=(1,), dtype="int32", name="item_id")

    s = keras.layers.Flatten()(keras.layers.Embedding(N_STORES, 16)(store))
    i = keras.layers.Flatten()(keras.layers.Embedding(N_ITEMS, 32)(item))
    static = keras.layers.Concatenate()([s, i])

    h = keras.layers.Conv1D(64, 7, padding="causal", activation="relu")(history)
    h = keras.layers.LSTM(128, return_sequences=True)(h)
    h = keras.layers.LSTM(128)(h)
    c = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(covars)
    c = keras.layers.GlobalAveragePooling1D()(c)

    x = keras.layers.Concatenate()([h, c, static])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(HORIZON, activation="softplus", name="demand")(x)
    model = keras.Model([history, covars, store, item], out, name="store_demand_forecaster")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="poisson", metrics=["mae"])
    return model


def smoke_batch(rng, n):
    return [
        rng.gamma(2.0, 3.0, size=(n, LOOKBACK, 1)).astype("float32"),
        rng.normal(size=(n, LOOKBACK + HORIZON, N_COVARIATES)).astype("float32"),
        rng.integers(0, N_STORES, size=(n, 1)).astype("int32"),
        rng.integers(0, N_ITEMS, size=(n, 1)).astype("int32"),
    ]


def main():
    print(f"imports done in {time.perf_counter() - t_start:.1f}s")
    report_environment()
    model = build_forecaster()
    model.summary(line_length=110)

    rng = np.random.default_rng(0)
    preds = model.predict(smoke_batch(rng, 8), verbose=0)
    print(f"smoke predict: {preds.shape}, finite={np.isfinite(preds).all()}")
    for b in range(2):
        preds = model.predict(smoke_batch(rng, 256), batch_size=128, verbose=0)
        print(f"batch {b}: mean forecast {preds.mean():.3f}")
    print(f"startup check finished in {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
