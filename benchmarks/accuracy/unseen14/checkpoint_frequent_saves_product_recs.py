"""Next-product recommendation model with a large catalogue embedding, checkpointed during training."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_PRODUCTS = 400_000
N_USERS = 50_000
EMB_DIM = 64
HIST_LEN = 20
BATCH_SIZE = 256
STEPS_PER_EPOCH = 20
EPOCHS = 3
SAVE_EVERY = 4  # batches
SEED = 31


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--save-every", type=int, default=SAVE_EVERY, help="checkpoint period")
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


class TimedCheckpoint(keras.callbacks.ModelCheckpoint):
    """ModelCheckpoint that also logs how long each save took."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.save_seconds = []

    def _save_model(self, epoch, batch, logs):
        t = time.perf_counter()
        super()._save_model(epoch, batch, logs)
        self.save_seconds.append(time.perf_counter() - t)


def synth_sessions(rng, n):
    popularity = rng.zipf(1.2, size=(n, HIST_LEN + 1)) % N_PRODUCTS
    users = rng.integers(0, N_USERS, size=(n, 1))
    return (popularity[:, :HIST_LEN].astype(np.int32), users.astype(np.int32)), popularity[
        :, HIST_LEN
    ].astype(np.int32)


def build_model():
    hist = keras.Input(shape=(HIST_LEN,), dtype="int32", name="history")
    user = keras.Input(shape=(1,), dtype="int32", name="user")
    prod_emb = keras.layers.Embedding(N_PRODUCTS, EMB_DIM, name="product_embedding")
    h = keras.layers.GlobalAveragePooling1D()(prod_emb(hist))
    u = keras.layers.Flatten()(keras.layers.Embedding(N_USERS, EMB_DIM)(user))
    x = keras.layers.Concatenate()([h, u])
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(EMB_DIM)(x)
    # score against a sampled slice of the catalogue (first 2048 products) as a softmax head
    logits = keras.layers.Dense(2048, name="candidate_head")(x)
    model = keras.Model([hist, user], logits)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["sparse_top_k_categorical_accuracy"],
    )
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    (hist_ids, user_ids), target = synth_sessions(rng, BATCH_SIZE * STEPS_PER_EPOCH * 4)
    target = target % 2048
    train = (
        tf.data.Dataset.from_tensor_slices(((hist_ids, user_ids), target))
        .shuffle(8192, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    ckpt_dir = tempfile.mkdtemp(prefix="u14_checkpoint_frequent_saves_product_recs_")
    try:
        model = build_model()
        print(f"params: {model.count_params():,}")
        clock = StepClock()
        ckpt = TimedCheckpoint(
            os.path.join(ckpt_dir, "recs_latest.keras"), save_freq=args.save_every
        )
        t0 = time.perf_counter()
        model.fit(
            train,
            epochs=args.epochs,
            steps_per_epoch=STEPS_PER_EPOCH,
            callbacks=[clock, ckpt],
            verbose=0,
        )
        fit_seconds = time.perf_counter() - t0
        full = clock.seconds_per_step()
        saved = sum(ckpt.save_seconds)
        print(
            f"fit {fit_seconds:.1f}s, {len(ckpt.save_seconds)} checkpoints took {saved:.1f}s "
            f"({100 * saved / fit_seconds:.0f}% of fit)"
        )
        out_path = os.environ.get("ACCURACY_OUT")
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

        if args.truth:
            batch = next(iter(train))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            clock2 = StepClock()
            ckpt2 = TimedCheckpoint(
                os.path.join(ckpt_dir, "recs_latest_cached.keras"), save_freq=args.save_every
            )
            model2.fit(
                cached,
                epochs=args.epochs,
                steps_per_epoch=STEPS_PER_EPOCH,
                callbacks=[clock2, ckpt2],
                verbose=0,
            )
            compute = clock2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            if out_path:
                with open(out_path, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
        print(f"recs model: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
