"""Hockey puck tracking frames: stacked consecutive broadcast-frame crops
(pre-built tensors in memory) regress the puck position with a residual conv
net trained by a custom @tf.function GradientTape loop. Compute-bound."""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


S = 32
BATCH = 32
N_BATCHES = 24
EPOCHS = 12


def make_frames(seed=89):
    rng = np.random.default_rng(seed)
    n = BATCH * N_BATCHES
    pos = rng.uniform(4, S - 4, (n, 2)).astype(np.float32)
    vel = rng.normal(0, 2.0, (n, 2)).astype(np.float32)
    yy, xx = np.mgrid[0:S, 0:S].astype(np.float32)
    frames = rng.normal(0.5, 0.08, (n, S, S, 3)).astype(np.float32)   # ice texture
    for k in range(3):
        p = pos - vel * (2 - k)
        blob = np.exp(-(((yy[None] - p[:, 0, None, None]) ** 2) + (xx[None] - p[:, 1, None, None]) ** 2) / 3.0)
        frames[..., k] -= 0.6 * blob
    batches = []
    for b in range(N_BATCHES):
        sl = slice(b * BATCH, (b + 1) * BATCH)
        batches.append((tf.constant(frames[sl]), tf.constant(pos[sl] / S)))
    return batches


def res_block(x, ch):
    h = keras.layers.Conv2D(ch, 3, padding="same", activation="relu")(x)
    h = keras.layers.Conv2D(ch, 3, padding="same")(h)
    if x.shape[-1] != ch:
        x = keras.layers.Conv2D(ch, 1)(x)
    return keras.layers.Activation("relu")(keras.layers.Add()([x, h]))


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((S, S, 3))
    x = res_block(inp, 24)
    x = res_block(x, 24)
    x = keras.layers.MaxPooling2D()(x)
    x = res_block(x, 48)
    x = res_block(x, 48)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(2, activation="sigmoid")(x)
    return keras.Model(inp, out, name="puck_locator")


def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    t = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for x, y in batches:
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), time.perf_counter() - t, loss


def main():
    batches = make_frames()
    full, loop_s, loss = train(batches)
    emit({"steps_per_second": 1.0 / full})
    print("puckframes normal: %.4f s/step, loop %.1f s, loss %.4f, wall %.1f s" % (full, loop_s, loss, time.perf_counter() - T0))
    if TRUTH:
        one = batches[0]
        comp, _, _ = train([one] * N_BATCHES)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("puckframes truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
