"""Arts/fashion business: recognising textile print patterns (paisley, houndstooth, ikat...) for a
design-archive search tool. Synthetic 32x32 pattern swatches are generated once as in-memory
tensors; a @tf.function GradientTape loop trains a CNN with bilinear (outer-product) pooling and
signed-sqrt normalisation, so each step is dominated by convolutions and the bilinear product."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, N, SIZE, CLASSES = 32, 150, 1024, 32, 8

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

class BilinearPool(keras.layers.Layer):
    def call(self, x):
        b = tf.shape(x)[0]; c = x.shape[-1]
        f = tf.reshape(x, (b, -1, c))
        g = tf.matmul(f, f, transpose_a=True) / tf.cast(tf.shape(f)[1], x.dtype)
        g = tf.reshape(g, (b, c * c))
        g = tf.sign(g) * tf.sqrt(tf.abs(g) + 1e-8)
        return tf.math.l2_normalize(g, axis=-1)

def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = BilinearPool()(x)
    out = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inp, out)

def train(get_batch):
    model = build_model(); opt = keras.optimizers.SGD(0.05, momentum=0.9)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    times = []
    for i in range(STEPS):
        x, y = get_batch(i)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_compute_bilinearpool_tapeloop_fabricpatterns_")
    try:
        rng = np.random.default_rng(49); keras.utils.set_random_seed(49)
        y = rng.integers(0, CLASSES, N).astype(np.int32)
        u, v = np.meshgrid(np.arange(SIZE), np.arange(SIZE))
        base = np.stack([np.sin((u * (k + 1) + v * (CLASSES - k)) / 4.0) for k in range(CLASSES)])
        x = (base[y][..., None] * rng.uniform(0.5, 1.0, (N, 1, 1, 3)) + rng.normal(0, 0.3, (N, SIZE, SIZE, 3))).astype(np.float32)
        X = tf.constant(x); Y = tf.constant(y)
        full, loss = train(lambda i: (X[(i * BATCH) % N:(i * BATCH) % N + BATCH], Y[(i * BATCH) % N:(i * BATCH) % N + BATCH]))
        emit({"steps_per_second": 1.0 / full})
        msg = "fabric bilinear: %.4f s/step, loss %.3f" % (full, loss)
        if truth:
            bx, by = X[:BATCH], Y[:BATCH]
            comp, _ = train(lambda i: (bx, by))
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
