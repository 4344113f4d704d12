"""Environment check and model smoke test for the insurance-claims severity model."""

import platform
import time

t_start = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

N_NUMERIC = 24
CATEGORICAL = {"region": 50, "vehicle_make": 300, "policy_type": 12, "agent_id": 4000}


def build_model():
    numeric = keras.Input(shape=(N_NUMERIC,), name="numeric")
    cat_inputs, cat_embs = [], []
    for name, card in CATEGORICAL.items():
        inp = keras.Input(shape=(1,), dtype="int32", name=name)
        emb = keras.layers.Embedding(card, min(32, card // 2 + 1))(inp)
        cat_inputs.append(inp)
        cat_embs.append(keras.layers.Flatten()(emb))
    x = keras.layers.Concatenate()([keras.layers.Normalization()(numeric)] + cat_embs)
    for units in (256, 128, 64):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    severity = keras.layers.Dense(1, activation="softplus", name="severity")(x)
    fraud = keras.layers.Dense(1, activation="sigmoid", name="fraud")(x)
    model = keras.Model([numeric] + cat_inputs, {"severity": severity, "fraud": fraud})
    model.compile(
        optimizer="adam",
        loss={"severity": "huber", "fraud": "binary_crossentropy"},
        metrics={"fraud": [keras.metrics.AUC()]},
    )
    return model


def main():
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"tensorflow {tf.__version__}, keras {keras.__version__}, numpy {np.__version__}")
    build = tf.sysconfig.get_build_info()
    print("cuda build:", build.get("is_cuda_build"), "| built with:", tf.test.is_built_with_cuda())
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])
    print(
        "intra/inter op threads:",
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
    )

    rng = np.random.default_rng(0)
    model = build_model()
    norm = next(layer for layer in model.layers if isinstance(layer, keras.layers.Normalization))
    reference = rng.lognormal(size=(20000, N_NUMERIC)).astype("float32")
    norm.adapt(tf.data.Dataset.from_tensor_slices(reference).batch(256))
    model.summary(line_length=100)

    n = 16384
    sample = [rng.normal(size=(n, N_NUMERIC)).astype("float32")] + [
        rng.integers(card, size=(n, 1)).astype("int32") for card in CATEGORICAL.values()
    ]
    for i, batch_size in enumerate((16, 64)):
        preds = model.predict(sample, batch_size=batch_size, verbose=0)
        print(
            f"smoke batch {i}: severity mean {preds['severity'].mean():.3f}, "
            f"fraud mean {preds['fraud'].mean():.3f}"
        )
    print(f"startup check finished in {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
