# Next-item recommender (large item-embedding table + MLP tower) trained with a custom loop.
# The job runs on preemptible machines, so a tf.train.CheckpointManager saves model, optimizer
# and step counter after every step, keeping the last three checkpoints.
import atexit
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf

ITEMS, DIM, HISTORY, BATCH = 200_000, 96, 20, 256
folder = tempfile.mkdtemp(prefix="recsys-ckpt-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
popularity = 1.0 / np.arange(1, ITEMS + 1) ** 0.8
popularity /= popularity.sum()
histories = rng.choice(ITEMS, size=(12_800, HISTORY), p=popularity).astype(np.int32)
next_item = ((histories[:, -1].astype(np.int64) * 7 + 3) % ITEMS).astype(np.int32)

sessions = (
    tf.data.Dataset.from_tensor_slices((histories, next_item))
    .shuffle(12_800, seed=5)
    .batch(BATCH, drop_remainder=True)
    .repeat()
)

item_history = keras.Input((HISTORY,), dtype="int32")
h = keras.layers.Embedding(ITEMS, DIM, name="item_embedding")(item_history)
h = keras.layers.GlobalAveragePooling1D()(h)
h = keras.layers.Dense(512, activation="relu")(h)
h = keras.layers.Dense(256, activation="relu")(h)
logits = keras.layers.Dense(1024)(h)  # sampled-softmax stand-in: hashed output buckets
model = keras.Model(item_history, logits)
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

step = tf.Variable(0, dtype=tf.int64, trainable=False)
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
manager = tf.train.CheckpointManager(checkpoint, folder, max_to_keep=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y % 1024, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    step.assign_add(1)
    return loss


for x, y in sessions.take(120):
    loss = train_step(x, y)
    manager.save(checkpoint_number=step)  # preemption can come at any moment
print("step", int(step), "loss", round(float(loss), 4), "latest", manager.latest_checkpoint)
