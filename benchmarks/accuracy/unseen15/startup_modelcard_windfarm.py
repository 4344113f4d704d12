"""Wind-farm power forecaster: environment check and model card before a training job is queued.

Usage: python startup_modelcard_windfarm.py
"""

import platform
import sys
import time

import numpy as np

t_start = time.perf_counter()
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

N_TURBINES = 24
HISTORY = 144
N_WEATHER = 10
HORIZON = 36


def environment_report():
    print(f"python      {sys.version.split()[0]} on {platform.platform()}")
    print(f"tensorflow  {tf.__version__}   keras {keras.__version__}   numpy {np.__version__}")
    build = tf.sysconfig.get_build_info()
    print(
        f"cuda build  {build.get('is_cuda_build', False)}   rocm build {build.get('is_rocm_build', False)}"
    )
    for dev in tf.config.list_physical_devices():
        print(f"device      {dev.device_type:4s} {dev.name}")
    print(f"gpus        {len(tf.config.list_physical_devices('GPU'))}")
    print(
        f"threads     inter={tf.config.threading.get_inter_op_parallelism_threads()} "
        f"intra={tf.config.threading.get_intra_op_parallelism_threads()}"
    )
    print(f"float       {keras.config.floatx()}   backend {keras.config.backend()}")


def build_model():
    scada = keras.Input(shape=(HISTORY, N_TURBINES), name="scada_power")
    weather = keras.Input(shape=(HORIZON, N_WEATHER), name="nwp_forecast")
    x = layers.Conv1D(64, 5, padding="causal", activation="relu")(scada)
    x = layers.Conv1D(64, 5, padding="causal", dilation_rate=2, activation="relu")(x)
    x = layers.LSTM(96)(x)
    w = layers.LSTM(48)(weather)
    h = layers.Concatenate()([x, w])
    h = layers.Dense(256, activation="relu")(h)
    h = layers.Dense(HORIZON * N_TURBINES)(h)
    out = layers.Reshape((HORIZON, N_TURBINES), name="power_forecast")(h)
    model = keras.Model([scada, weather], out, name="windfarm_forecaster")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mae", metrics=["mse"])
    return model


def main():
    environment_report()
    model = build_model()
    model.summary()
    rng = np.random.default_rng(0)
    scada = rng.uniform(0, 1, size=(256, HISTORY, N_TURBINES)).astype("float32")
    weather = rng.normal(size=(256, HORIZON, N_WEATHER)).astype("float32")
    pred = model.predict([scada, weather], batch_size=128, verbose=0)
    print(f"smoke test: forecast {pred.shape}, mean {pred.mean():+.4f}")
    print(
        f"summary: ready in {time.perf_counter() - t_start:.1f}s, {model.count_params():,} parameters"
    )


if __name__ == "__main__":
    main()
