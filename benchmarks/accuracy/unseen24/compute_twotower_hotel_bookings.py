"""Hotel booking propensity model (user x hotel recommender).

User and hotel IDs are embedded, concatenated with a few context features
(lead time, stay length, device...) and passed through a deep MLP that
predicts whether the impression ends in a booking.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_USERS = 50_000
N_HOTELS = 30_000
N_CONTEXT = 16
N_ROWS = 130_000
EMBED_DIM = 64
BATCH_SIZE = 2048
EPOCHS = 2
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(2024)

# ---------------------------------------------------------------- data
user_ids = rng.integers(0, N_USERS, size=N_ROWS).astype(np.int32)
hotel_ids = (rng.zipf(1.3, size=N_ROWS) % N_HOTELS).astype(np.int32)
context = rng.normal(size=(N_ROWS, N_CONTEXT)).astype(np.float32)
user_bias = rng.normal(0, 1, N_USERS)
hotel_bias = rng.normal(0, 1, N_HOTELS)
logit = user_bias[user_ids] + hotel_bias[hotel_ids] + context[:, 0] - 2.0
booked = (rng.random(N_ROWS) < 1 / (1 + np.exp(-logit))).astype(np.float32)
print(f"{N_ROWS} impressions, booking rate {booked.mean():.3f}")


# ---------------------------------------------------------------- model
def build_model():
    user_in = keras.Input(shape=(), dtype="int32", name="user_id")
    hotel_in = keras.Input(shape=(), dtype="int32", name="hotel_id")
    ctx_in = keras.Input(shape=(N_CONTEXT,), name="context")
    u = keras.layers.Embedding(N_USERS, EMBED_DIM)(user_in)
    h = keras.layers.Embedding(N_HOTELS, EMBED_DIM)(hotel_in)
    x = keras.layers.Concatenate()([u, h, ctx_in, u * h])
    for width in (1024, 512, 256):
        x = keras.layers.Dense(width, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([user_in, hotel_in, ctx_in], out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


inputs = {"user_id": user_ids, "hotel_id": hotel_ids, "context": context}
steps_per_epoch = N_ROWS // BATCH_SIZE

model = build_model()
clock = StepClock()
model.fit(inputs, booked, batch_size=BATCH_SIZE, epochs=EPOCHS, callbacks=[clock], verbose=2)
full = clock.seconds_per_step()
write_out({"steps_per_second": 1.0 / full})
summary = f"hotel bookings: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = ({k: v[:BATCH_SIZE] for k, v in inputs.items()}, booked[:BATCH_SIZE])
    model = build_model()
    clock = StepClock()
    model.fit(
        tf.data.Dataset.from_tensors(batch).repeat(),
        steps_per_epoch=steps_per_epoch,
        epochs=EPOCHS,
        callbacks=[clock],
        verbose=2,
    )
    compute = clock.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
