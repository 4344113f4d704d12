"""Media: tagging album cover art by music genre for a streaming catalogue.
Synthetic 32x32 RGB cover thumbnails and genre labels are generated once as in-memory numpy
arrays; model.fit trains a capsule network (primary capsules plus three iterations of dynamic
routing-by-agreement), so each step is dominated by the routing math."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N, GENRES, CAPS_DIM, OUT_DIM, ROUTING = 32, 60, 3, 2560, 10, 8, 16, 3

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def squash(v, axis=-1):
    n2 = tf.reduce_sum(tf.square(v), axis=axis, keepdims=True)
    return n2 / (1.0 + n2) * v / tf.sqrt(n2 + 1e-7)

class CapsuleRouting(keras.layers.Layer):
    def __init__(self, n_out, out_dim, iters, **kw):
        super().__init__(**kw); self.n_out, self.out_dim, self.iters = n_out, out_dim, iters
    def build(self, shape):
        self.n_in, self.in_dim = shape[1], shape[2]
        self.W = self.add_weight(shape=(self.n_in, self.n_out, self.out_dim, self.in_dim), initializer="glorot_uniform")
    def call(self, u):
        u_hat = tf.einsum("bid,ijod->bijo", u, self.W)  # b, n_in, n_out, out_dim
        b = tf.zeros_like(u_hat[..., 0])
        for i in range(self.iters):
            c = tf.nn.softmax(b, axis=2)
            v = squash(tf.reduce_sum(c[..., None] * u_hat, axis=1))           # b, n_out, out_dim
            if i < self.iters - 1:
                b = b + tf.reduce_sum(u_hat * v[:, None], axis=-1)
        return v

def build_model():
    inp = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(96, 5, strides=2, activation="relu")(inp)
    x = keras.layers.Conv2D(24 * CAPS_DIM, 5, strides=2, activation="relu")(x)
    x = keras.layers.Reshape((-1, CAPS_DIM))(x)
    x = keras.layers.Lambda(squash)(x)
    v = CapsuleRouting(GENRES, OUT_DIM, ROUTING)(x)
    out = keras.layers.Lambda(lambda t: tf.sqrt(tf.reduce_sum(tf.square(t), -1) + 1e-7))(v)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=lambda y, p: tf.reduce_mean(tf.reduce_sum(
        y * tf.square(tf.nn.relu(0.9 - p)) + 0.5 * (1 - y) * tf.square(tf.nn.relu(p - 0.1)), -1)))
    return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_compute_capsnet_fit_albumcovers_")
    try:
        rng = np.random.default_rng(49); keras.utils.set_random_seed(49)
        y = rng.integers(0, GENRES, N)
        x = rng.normal(0, 0.3, (N, 32, 32, 3)).astype(np.float32)
        x[np.arange(N), (y * 3) % 32, :, y % 3] += 2.0
        yoh = np.eye(GENRES, dtype=np.float32)[y]
        model = build_model(); timer = StepTimer()
        ds = tf.data.Dataset.from_tensor_slices((x, yoh)).shuffle(N, seed=4).repeat().batch(BATCH).prefetch(2)
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "album capsnet: %.4f s/step" % full
        if truth:
            batch = (tf.constant(x[:BATCH]), tf.constant(yoh[:BATCH]))
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
