# A hand-written loop that keeps every step's outputs, attention-like maps and inputs in a list
# "to plot them after training": memory grows with every step. It reads its own RSS.
import time

import keras
import numpy as np
import tensorflow as tf
from truth import report


def rss_bytes():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


model = keras.Sequential(
    [keras.Input((512,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(512)]
)
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        out = model(x, training=True)
        loss = tf.reduce_mean(tf.square(out - x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return out, tf.matmul(out, out, transpose_b=True)


rng = np.random.default_rng(0)
history = []
train_step(tf.constant(rng.random((512, 512), dtype=np.float32)))
start_rss = start_peak = rss_bytes()
start = time.perf_counter()
for step in range(400):
    x = tf.constant(rng.random((512, 512), dtype=np.float32))
    out, similarity = train_step(x)
    history.append({"step": step, "input": x, "output": out, "similarity": similarity})
end_rss = rss_bytes()
print("kept", len(history), "steps")
report(
    loop_seconds=time.perf_counter() - start,
    rss_start_bytes=start_rss,
    rss_end_bytes=end_rss,
    rss_growth_bytes=end_rss - start_rss,
)
