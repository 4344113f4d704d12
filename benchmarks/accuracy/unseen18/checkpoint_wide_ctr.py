"""Click-through-rate model (wide & deep) for an ad marketplace, checkpointed during training."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_EVENTS = 50000
N_ADS = 150000
N_PUBLISHERS = 20000
N_DENSE = 16
BATCH_SIZE = 512
STEPS = 120


def make_events(rng):
    ads = rng.zipf(1.3, N_EVENTS) % N_ADS
    pubs = rng.integers(0, N_PUBLISHERS, N_EVENTS)
    dense = rng.normal(size=(N_EVENTS, N_DENSE)).astype(np.float32)
    logit = 0.8 * dense[:, 0] - 0.5 * dense[:, 3] + 0.3 * ((ads % 7) == 0)
    clicks = (rng.random(N_EVENTS) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return {"ad": ads.astype(np.int32), "pub": pubs.astype(np.int32), "numeric": dense}, clicks


def build_model():
    ad = keras.Input(shape=(), dtype="int32", name="ad")
    pub = keras.Input(shape=(), dtype="int32", name="pub")
    dense = keras.Input(shape=(N_DENSE,), name="numeric")
    ad_emb = keras.layers.Embedding(N_ADS, 64)(ad)
    pub_emb = keras.layers.Embedding(N_PUBLISHERS, 32)(pub)
    x = keras.layers.Concatenate()([ad_emb, pub_emb, dense])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    wide = keras.layers.Embedding(N_ADS, 1)(ad)
    out = keras.layers.Activation("sigmoid")(keras.layers.Dense(1)(x) + wide)
    model = keras.Model({"ad": ad, "pub": pub, "numeric": dense}, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds, ckpt_dir, save_every):
    model = build_model()
    timer = StepTimer()
    callbacks = [timer]
    if save_every > 0:
        callbacks.append(
            keras.callbacks.ModelCheckpoint(
                os.path.join(ckpt_dir, "ctr_latest.keras"), save_freq=save_every
            )
        )
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=callbacks, verbose=2)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--save-every", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(21)
    features, clicks = make_events(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((features, clicks))
        .shuffle(N_EVENTS, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    ckpt_dir = tempfile.mkdtemp(prefix="u18_checkpoint_wide_ctr_")
    try:
        t0 = time.perf_counter()
        sec, loss = train(ds, ckpt_dir, args.save_every)
        print(f"real input: {sec * 1000:.1f} ms/step, loss {loss:.4f}")
        print(f"training with checkpoints took {time.perf_counter() - t0:.1f}s")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
        if args.truth:
            batch = next(iter(ds))
            csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), ckpt_dir, args.save_every)
            frac = min(1.0, max(0.0, (sec - csec) / sec))
            print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
