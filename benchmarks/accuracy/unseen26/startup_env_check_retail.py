"""Environment check for the retail demand model: devices, precision policy, model summary."""

import io
import platform
import sys
import time

t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

print(f"python {platform.python_version()} on {platform.machine()}")
print(f"tensorflow {tf.__version__}, keras {keras.__version__}, numpy {np.__version__}")
print(f"import took {time.perf_counter() - t0:.1f}s")

gpus = tf.config.list_physical_devices("GPU")
cpus = tf.config.list_physical_devices("CPU")
print(f"GPUs: {len(gpus)}  CPUs: {len(cpus)}")
if gpus:
    for g in gpus:
        tf.config.experimental.set_memory_growth(g, True)
    print(tf.config.experimental.get_device_details(gpus[0]))
else:
    print("no GPU found, running on CPU")
print("built with CUDA:", tf.test.is_built_with_cuda())
print("build info:", {k: v for k, v in tf.sysconfig.get_build_info().items() if "version" in k})
print("logical devices:", [d.name for d in tf.config.list_logical_devices()])

keras.mixed_precision.set_global_policy("mixed_float16")
print("policy:", keras.mixed_precision.global_policy().name)
keras.mixed_precision.set_global_policy("float32")
print("policy reset to:", keras.mixed_precision.global_policy().name)

N_STORES = 500
N_ITEMS = 3000
HISTORY = 56


def build_model():
    store = keras.Input((1,), dtype="int32", name="store")
    item = keras.Input((1,), dtype="int32", name="item")
    history = keras.Input((HISTORY, 4), name="history")
    s = keras.layers.Flatten()(keras.layers.Embedding(N_STORES, 16)(store))
    i = keras.layers.Flatten()(keras.layers.Embedding(N_ITEMS, 32)(item))
    h = keras.layers.Conv1D(64, 7, padding="causal", activation="relu")(history)
    h = keras.layers.Conv1D(64, 7, padding="causal", dilation_rate=2, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    x = keras.layers.Concatenate()([s, i, h])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(28, name="forecast")(x)
    return keras.Model([store, item, history], out, name="demand_forecaster")


model = build_model()
model.compile(keras.optimizers.Adam(1e-3), "mse")
buf = io.StringIO()
model.summary(print_fn=lambda line, **kw: buf.write(line + "\n"))
summary = buf.getvalue()
print(summary)
print(f"parameters: {model.count_params():,}")

rng = np.random.default_rng(0)
sample = {
    "store": rng.integers(0, N_STORES, (8, 1)).astype(np.int32),
    "item": rng.integers(0, N_ITEMS, (8, 1)).astype(np.int32),
    "history": rng.random((8, HISTORY, 4)).astype(np.float32),
}
pred = model.predict(sample, verbose=0)
batch = {
    "store": rng.integers(0, N_STORES, (512, 1)).astype(np.int32),
    "item": rng.integers(0, N_ITEMS, (512, 1)).astype(np.int32),
    "history": rng.random((512, HISTORY, 4)).astype(np.float32),
}
for _ in range(2):
    model.predict_on_batch(batch)
print("smoke-test forecast shape:", pred.shape, "finite:", bool(np.isfinite(pred).all()))
print(f"total {time.perf_counter() - t0:.1f}s", file=sys.stderr)
