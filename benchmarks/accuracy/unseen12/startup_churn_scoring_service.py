"""Start-up of a customer-churn scoring service: no training.

Imports TensorFlow, reports the available devices, computes feature statistics from a reference table, builds and compiles the two models
the service hosts (a wide-and-deep churn classifier and a usage autoencoder used for
anomaly flags), prints their summaries runs a few tiny warm-up predictions,
then writes the serving artifacts (.keras files and a SavedModel) and checks a reload.

    python startup_churn_scoring_service.py
"""

import os
import tempfile
import time

T0 = time.perf_counter()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

N_NUMERIC = 18
PLANS = ["basic", "plus", "family", "business", "student"]
REGIONS = 40


def churn_model(reference_table):
    numeric = keras.Input((N_NUMERIC,), name="numeric")
    plan = keras.Input((1,), dtype="int32", name="plan")
    region = keras.Input((1,), dtype="int32", name="region")

    plan_emb = keras.layers.Flatten()(keras.layers.Embedding(len(PLANS), 4)(plan))
    region_emb = keras.layers.Flatten()(keras.layers.Embedding(REGIONS, 8)(region))
    normalizer = keras.layers.Normalization()
    normalizer.adapt(
        tf.data.Dataset.from_tensor_slices(reference_table).batch(4096)
    )  # feature stats from the reference table
    norm = normalizer(numeric)

    deep = keras.layers.Concatenate()([norm, plan_emb, region_emb])
    for units in (128, 64, 32):
        deep = keras.layers.Dense(units, activation="relu")(deep)
        deep = keras.layers.Dropout(0.1)(deep)
    wide = keras.layers.Concatenate()([norm, keras.layers.CategoryEncoding(len(PLANS))(plan)])
    both = keras.layers.Concatenate()([deep, wide])
    out = keras.layers.Dense(1, activation="sigmoid", name="churn_prob")(both)
    model = keras.Model([numeric, plan, region], out, name="wide_and_deep_churn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc"), "accuracy"],
    )
    return model


def usage_autoencoder(days=90, channels=3):
    inp = keras.Input((days, channels), name="daily_usage")
    x = keras.layers.Conv1D(32, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(16, 5, strides=3, padding="same", activation="relu")(x)
    code = keras.layers.Flatten(name="code")(x)
    x = keras.layers.Dense(15 * 16, activation="relu")(code)
    x = keras.layers.Reshape((15, 16))(x)
    x = keras.layers.Conv1DTranspose(32, 5, strides=3, padding="same", activation="relu")(x)
    out = keras.layers.Conv1DTranspose(channels, 5, strides=2, padding="same")(x)
    model = keras.Model(inp, out, name="usage_autoencoder")
    model.compile(optimizer="adam", loss="mse")
    return model


def main():
    print("TensorFlow", tf.__version__, "| Keras", keras.__version__)
    devices = tf.config.list_physical_devices()
    print("devices:", ", ".join(f"{d.device_type}:{d.name}" for d in devices))
    if not tf.config.list_physical_devices("GPU"):
        print("no GPU found, serving on CPU")

    rng = np.random.default_rng(0)
    reference = rng.lognormal(1.0, 0.8, size=(2_000_000, N_NUMERIC)).astype("float32")
    churn = churn_model(reference)
    churn.summary()
    ae = usage_autoencoder()
    ae.summary()

    for n in (1, 4, 32):  # warm up the request sizes the service batches to
        sample = {
            "numeric": rng.normal(size=(n, N_NUMERIC)).astype("float32"),
            "plan": rng.integers(0, len(PLANS), size=(n, 1)).astype("int32"),
            "region": rng.integers(0, REGIONS, size=(n, 1)).astype("int32"),
        }
        probs = churn.predict_on_batch(sample)
        recon = ae.predict_on_batch(rng.random((n, 90, 3)).astype("float32"))
    # export the serving artifacts and make sure they reload
    export_dir = tempfile.mkdtemp(prefix="churn_service_")
    churn.save(os.path.join(export_dir, "churn.keras"))
    ae.save(os.path.join(export_dir, "usage_ae.keras"))
    reloaded = keras.models.load_model(os.path.join(export_dir, "churn.keras"))
    same = np.allclose(reloaded.predict_on_batch(sample), probs, atol=1e-5)
    churn.export(os.path.join(export_dir, "churn_savedmodel"), verbose=False)
    ae.export(os.path.join(export_dir, "usage_ae_savedmodel"), verbose=False)

    print(
        f"startup: 2 models ready ({churn.count_params() + ae.count_params()} params), "
        f"mean warm-up churn prob {float(np.mean(probs)):.3f}, recon {tuple(recon.shape)}, reload ok {same}, "
        f"{time.perf_counter() - T0:.1f}s since launch"
    )


if __name__ == "__main__":
    main()
