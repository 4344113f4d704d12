"""Quick sanity check of the churn-model candidates before launching training."""

import platform
import time

t_start = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

N_NUMERIC = 32
N_PLANS = 12
N_REGIONS = 40


def print_environment():
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"tensorflow {tf.__version__}, keras {keras.__version__}, numpy {np.__version__}")
    info = tf.sysconfig.get_build_info()
    for key in ("is_cuda_build", "is_rocm_build", "cuda_version", "cudnn_version"):
        print(f"  build {key}: {info.get(key)}")
    print("physical devices:")
    for dev in tf.config.list_physical_devices():
        print(f"  {dev.device_type}: {dev.name}")
    print(f"logical devices: {[d.name for d in tf.config.list_logical_devices()]}")
    print(f"intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads()}")
    print(f"keras backend: {keras.backend.backend()}, floatx: {keras.backend.floatx()}")


def inputs():
    numeric = keras.Input(shape=(N_NUMERIC,), name="numeric")
    plan = keras.Input(shape=(1,), dtype="int32", name="plan")
    region = keras.Input(shape=(1,), dtype="int32", name="region")
    plan_emb = keras.layers.Flatten()(keras.layers.Embedding(N_PLANS, 8)(plan))
    region_emb = keras.layers.Flatten()(keras.layers.Embedding(N_REGIONS, 16)(region))
    return [numeric, plan, region], keras.layers.Concatenate()([numeric, plan_emb, region_emb])


def wide_mlp():
    ins, x = inputs()
    for units in (512, 256, 128):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(ins, out, name="wide_mlp")


def residual_mlp():
    ins, x = inputs()
    x = keras.layers.Dense(256)(x)
    for _ in range(4):
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.Dense(512, activation="gelu")(h)
        h = keras.layers.Dense(256)(h)
        x = keras.layers.Add()([x, h])
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(ins, out, name="residual_mlp")


def deep_cross():
    ins, x0 = inputs()
    x = x0
    for _ in range(3):
        w = keras.layers.Dense(x0.shape[-1])(x)
        x = keras.layers.Add()([keras.layers.Multiply()([x0, w]), x])
    deep = keras.layers.Dense(256, activation="relu")(x0)
    deep = keras.layers.Dense(128, activation="relu")(deep)
    out = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Concatenate()([x, deep]))
    return keras.Model(ins, out, name="deep_cross")


def sample_customers(n, rng):
    return {
        "numeric": rng.standard_normal((n, N_NUMERIC)).astype("float32"),
        "plan": rng.integers(0, N_PLANS, (n, 1)).astype("int32"),
        "region": rng.integers(0, N_REGIONS, (n, 1)).astype("int32"),
    }


def main():
    print_environment()
    rng = np.random.default_rng(0)
    customers = sample_customers(16, rng)
    for build in (wide_mlp, residual_mlp, deep_cross):
        model = build()
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
        model.summary()
        probs = model.predict(customers, verbose=0)
        print(
            f"{model.name}: {model.count_params():,} params, "
            f"churn prob mean {probs.mean():.3f} on {len(probs)} customers"
        )
    print(f"done in {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
