"""Network-flow anomaly autoencoder with very aggressive checkpointing.

The cluster this ran on used to pre-empt jobs, so the author set ModelCheckpoint
to write a full .keras model every few batches (plus a best-only copy per epoch).
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--save-every", type=int, default=1, help="batches between checkpoints")
p.add_argument("--truth", action="store_true")
args = p.parse_args()

N_FLOWS, N_FEAT = 10240, 40
rng = np.random.default_rng(11)
latent = rng.normal(size=(N_FLOWS, 6))
mix = rng.normal(size=(6, N_FEAT))
flows = np.tanh(latent @ mix + 0.1 * rng.normal(size=(N_FLOWS, N_FEAT))).astype("float32")


def flow_dataset():
    ds = tf.data.Dataset.from_tensor_slices((flows, flows)).cache()
    return ds.shuffle(N_FLOWS).batch(args.batch).prefetch(tf.data.AUTOTUNE)


def autoencoder():
    inp = keras.Input((N_FEAT,), name="flow_features")
    h = keras.layers.Dense(256, activation="gelu")(inp)
    h = keras.layers.Dense(128, activation="gelu")(h)
    z = keras.layers.Dense(8, name="bottleneck")(h)
    h = keras.layers.Dense(128, activation="gelu")(z)
    h = keras.layers.Dense(256, activation="gelu")(h)
    out = keras.layers.Dense(N_FEAT, activation="tanh")(h)
    ae = keras.Model(inp, out, name="flow_ae")
    ae.compile(optimizer=keras.optimizers.Nadam(1e-3), loss="mse")
    return ae


class StepEnds(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.t = []

    def on_train_batch_end(self, batch, logs=None):
        self.t.append(time.perf_counter())


def emit(k, v):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({k: v}) + "\n")


ckpt_dir = tempfile.mkdtemp(prefix="flow_ae_ckpt_")


def callbacks(tag):
    return [
        keras.callbacks.ModelCheckpoint(
            os.path.join(ckpt_dir, f"{tag}_latest.keras"), save_freq=args.save_every
        ),
        keras.callbacks.ModelCheckpoint(
            os.path.join(ckpt_dir, f"{tag}_best.weights.h5"),
            monitor="loss",
            save_best_only=True,
            save_weights_only=True,
        ),
    ]


try:
    model = autoencoder()
    model.summary()
    steps = int(np.ceil(N_FLOWS / args.batch)) * args.epochs
    t0 = time.perf_counter()
    model.fit(flow_dataset(), epochs=args.epochs, callbacks=callbacks("run"), verbose=2)
    dt = time.perf_counter() - t0
    print(
        f"{steps} steps, {dt:.1f}s, {steps / dt:.2f} steps/s; "
        f"checkpoint dir holds {len(os.listdir(ckpt_dir))} files"
    )
    emit("steps_per_second", steps / dt)

    restored = keras.models.load_model(os.path.join(ckpt_dir, "run_latest.keras"))
    err = np.mean((restored.predict(flows[:1024], verbose=0) - flows[:1024]) ** 2, axis=1)
    print(
        f"restored model: median recon error {np.median(err):.4f}, p99 {np.quantile(err, 0.99):.4f}"
    )

    if args.truth:
        full_cb = StepEnds()
        model.fit(
            flow_dataset(),
            epochs=args.epochs,
            verbose=0,
            callbacks=callbacks("truth_full") + [full_cb],
        )
        one = tf.data.Dataset.from_tensors((flows[: args.batch], flows[: args.batch])).repeat()
        comp_cb = StepEnds()
        model.fit(
            one,
            steps_per_epoch=steps // args.epochs,
            epochs=args.epochs,
            verbose=0,
            callbacks=callbacks("truth_comp") + [comp_cb],
        )
        full = float(np.mean(np.diff(full_cb.t[5:])))
        comp = float(np.mean(np.diff(comp_cb.t[5:])))
        frac = min(1.0, max(0.0, (full - comp) / full))
        print(
            f"truth: full {full * 1e3:.1f}ms/step compute {comp * 1e3:.1f}ms/step input {frac:.3f}"
        )
        emit("truth_input_fraction", frac)
finally:
    shutil.rmtree(ckpt_dir, ignore_errors=True)
