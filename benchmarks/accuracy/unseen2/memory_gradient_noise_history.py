# Estimates the gradient noise scale of a digit-like classifier to pick a batch size: the loop
# keeps every step's gradients (as NumPy arrays) in a list, then compares the per-step
# gradient norms with the norm of their running mean after training.
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.random((48_000, 784), dtype=np.float32)
y = (x[:, :392].sum(axis=1) * 3).astype(np.int32) % 10

model = keras.Sequential(
    [
        keras.Input((784,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(10),
    ]
)
optimizer = keras.optimizers.SGD(0.05, momentum=0.9)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
batches = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(48_000, seed=6).batch(128)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss, grads


gradient_history = []
for xb, yb in batches:
    loss, grads = train_step(xb, yb)
    gradient_history.append([g.numpy() for g in grads])
print("steps", len(gradient_history), "last loss", round(float(loss), 4))

mean = [np.zeros_like(g) for g in gradient_history[0]]
squared_norms = []
for grads in gradient_history:
    squared_norms.append(sum(float(np.sum(g * g)) for g in grads))
    for m, g in zip(mean, grads, strict=True):
        m += g / len(gradient_history)
mean_norm = sum(float(np.sum(m * m)) for m in mean)
print("gradient noise scale ~", round(np.mean(squared_norms) / mean_norm, 2))
