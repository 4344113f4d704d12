"""Pre-flight check for a heat-pump energy-forecast ensemble before a nightly job: no training happens.
Data path: none beyond one synthetic batch of 48-hour weather/load windows; the script imports TensorFlow, inspects
devices and threading, builds and compiles the four ensemble members (LSTM, TCN-style Conv1D, MLP, small
Transformer encoder), prints their sizes and runs one predict per member as a smoke test."""
import json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 41
T, F = 48, 12


def lstm_member():
    inp = keras.Input((T, F))
    h = keras.layers.LSTM(64, return_sequences=True)(inp)
    h = keras.layers.LSTM(32)(h)
    return keras.Model(inp, keras.layers.Dense(24)(h), name="lstm_member")


def tcn_member():
    inp = keras.Input((T, F))
    h = inp
    for d in (1, 2, 4, 8):
        h = keras.layers.Conv1D(48, 3, padding="causal", dilation_rate=d, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(24)(h), name="tcn_member")


def mlp_member():
    inp = keras.Input((T, F))
    h = keras.layers.Flatten()(inp)
    for u in (256, 128, 64):
        h = keras.layers.Dense(u, activation="gelu")(h)
    return keras.Model(inp, keras.layers.Dense(24)(h), name="mlp_member")


def transformer_member():
    inp = keras.Input((T, F))
    h = keras.layers.Dense(64)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(4, 16)(h, h)
        h = keras.layers.LayerNormalization()(h + a)
        f = keras.layers.Dense(128, activation="gelu")(h)
        h = keras.layers.LayerNormalization()(h + keras.layers.Dense(64)(f))
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(24)(h), name="transformer_member")


def main():
    tmp = tempfile.mkdtemp(prefix="u41_startup_ensemble_preflight_heatpump_")
    try:
        keras.utils.set_random_seed(SEED)
        devices = [d.device_type for d in tf.config.list_physical_devices()]
        info = {"tf": tf.__version__, "keras": keras.__version__, "devices": devices,
                "intra": tf.config.threading.get_intra_op_parallelism_threads(),
                "built_with_cuda": tf.test.is_built_with_cuda()}
        batch = np.random.default_rng(SEED).normal(size=(32, T, F)).astype(np.float32)
        sizes = {}
        for build in (lstm_member, tcn_member, mlp_member, transformer_member):
            m = build()
            m.compile(optimizer=keras.optimizers.AdamW(1e-3), loss="huber", metrics=["mae"])
            lines = []
            m.summary(print_fn=lambda s, **kw: lines.append(s))
            pred = m.predict(batch, verbose=0)
            assert pred.shape == (32, 24) and np.isfinite(pred).all()
            sizes[m.name] = m.count_params()
        with open(os.path.join(tmp, "preflight.json"), "w") as f:
            json.dump({"env": info, "members": sizes}, f)
        print(f"startup_ensemble_preflight_heatpump: devices={devices} members={sizes} in {time.perf_counter() - T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
