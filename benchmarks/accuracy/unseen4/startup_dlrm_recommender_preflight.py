# Pre-flight check for the click-through recommender job: reports the TensorFlow/Keras
# versions, devices, threading and mixed-precision settings, then builds the DLRM-style
# model (three large categorical embedding tables, a bottom MLP for dense features, pairwise
# dot-product feature interactions, a top MLP), compiles it, round-trips its config through
# JSON and rebuilds it from that config to be sure it can be restored. Nothing is trained.
import json
import os
import platform
import tempfile

import keras
import numpy as np
import tensorflow as tf

print(
    "python",
    platform.python_version(),
    "| tensorflow",
    tf.__version__,
    "| keras",
    keras.__version__,
)
print("backend:", keras.backend.backend(), "| float type:", keras.backend.floatx())
print(
    "built with CUDA:",
    tf.test.is_built_with_cuda(),
    "| GPUs:",
    tf.config.list_physical_devices("GPU"),
)
for device in tf.config.list_logical_devices():
    print("  logical device:", device.name)
print(
    "threads: intra-op",
    tf.config.threading.get_intra_op_parallelism_threads(),
    "inter-op",
    tf.config.threading.get_inter_op_parallelism_threads(),
    "| os cpus",
    os.cpu_count(),
)
print("dtype policy:", keras.config.dtype_policy().name)

TABLES = {"user_id": 400_000, "item_id": 250_000, "campaign": 20_000}
DIM, DENSE = 64, 13


@keras.saving.register_keras_serializable(package="dlrm")
class PairwiseInteractions(keras.layers.Layer):
    """Dot products between every pair of feature vectors (upper triangle, flattened)."""

    def call(self, vectors):
        stacked = keras.ops.stack(vectors, axis=1)
        products = keras.ops.matmul(stacked, keras.ops.transpose(stacked, (0, 2, 1)))
        n = len(vectors)
        rows, cols = np.triu_indices(n, k=1)
        flat = keras.ops.reshape(products, (-1, n * n))
        return keras.ops.take(flat, rows * n + cols, axis=1)


def build_model():
    dense_in = keras.Input((DENSE,), name="dense_features")
    bottom = keras.layers.Dense(256, activation="relu")(dense_in)
    bottom = keras.layers.Dense(DIM, activation="relu")(bottom)
    inputs, vectors = [dense_in], [bottom]
    for name, size in TABLES.items():
        ids = keras.Input((), dtype="int32", name=name)
        inputs.append(ids)
        vectors.append(keras.layers.Embedding(size, DIM, name=f"{name}_table")(ids))
    upper = PairwiseInteractions(name="interactions")(vectors)
    top = keras.layers.Concatenate()([bottom, upper])
    for units in (512, 256, 128):
        top = keras.layers.Dense(units, activation="relu")(top)
    click = keras.layers.Dense(1, activation="sigmoid", name="click")(top)
    model = keras.Model(inputs, click, name="dlrm")
    model.compile(
        optimizer=keras.optimizers.Adagrad(0.05),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc"), keras.metrics.BinaryAccuracy(name="acc")],
    )
    return model


model = build_model()
model.summary(line_length=100)
weights = sum(int(np.prod(w.shape)) for w in model.weights)
print(f"weights: {weights:,} ({weights * 4 / 2**20:.0f} MiB as float32)")

with tempfile.TemporaryDirectory(prefix="dlrm-preflight-") as folder:
    path = os.path.join(folder, "dlrm_config.json")
    with open(path, "w") as fh:
        json.dump(model.get_config(), fh)
    with open(path) as fh:
        config = json.load(fh)
    rebuilt = keras.Model.from_config(config)
    same = [w.shape for w in rebuilt.weights] == [w.shape for w in model.weights]
    print("config round trip:", os.path.getsize(path), "bytes, same weight shapes:", same)
print("pre-flight check passed")
