"""Sonar contact classification (rock, mine, wreck, biologic, clutter) from
side-scan sonar snippets: 40x40 single-channel intensity patches generated in
memory as numpy arrays.  The model is a capsule network (primary capsules
plus three iterations of dynamic routing-by-agreement) trained with
model.fit on the in-memory arrays, so the step is dominated by model math."""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N, NCLS = 32, 40, 3, 2560, 5


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
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def squash(v, axis=-1):
    n2 = tf.reduce_sum(tf.square(v), axis, keepdims=True)
    return v * (n2 / (1.0 + n2)) / tf.sqrt(n2 + 1e-7)


class Routing(keras.layers.Layer):
    def __init__(self, n_out, d_out, iters=3, **kw):
        super().__init__(**kw); self.n_out, self.d_out, self.iters = n_out, d_out, iters
    def build(self, shape):
        self.n_in, self.d_in = shape[1], shape[2]
        self.W = self.add_weight(shape=(self.n_in, self.n_out, self.d_out, self.d_in),
                                 initializer=keras.initializers.RandomNormal(stddev=0.05), name="W")
    def call(self, u):
        u_hat = tf.einsum("iojk,bik->bioj", self.W, u)
        b = tf.zeros(tf.stack([tf.shape(u)[0], self.n_in, self.n_out]))
        for r in range(self.iters):
            c = tf.nn.softmax(b, axis=2)
            v = squash(tf.einsum("bio,bioj->boj", c, u_hat))
            if r < self.iters - 1:
                b = b + tf.einsum("bioj,boj->bio", u_hat, v)
        return v


def make_data(rng):
    x = rng.normal(0.2, 0.1, (N, 40, 40, 1)).astype(np.float32)
    y = rng.integers(0, NCLS, N)
    yy, xx = np.mgrid[0:40, 0:40]
    for i in range(N):
        cy, cx = rng.integers(10, 30, 2)
        r = 3 + 2 * y[i]
        x[i, :, :, 0] += (((yy - cy) ** 2 + (xx - cx) ** 2) < r * r) * 0.8
        x[i, cy:, max(cx - 2, 0):cx + 2, 0] *= 0.3  # acoustic shadow
    return x, y.astype(np.int32)


def build():
    keras.utils.set_random_seed(21)
    inp = keras.Input((40, 40, 1))
    h = keras.layers.Conv2D(32, 5, activation="relu")(inp)
    h = keras.layers.Conv2D(32, 5, strides=2, activation="relu")(h)
    h = keras.layers.Reshape((-1, 8))(h)
    h = keras.layers.Lambda(squash)(h)
    caps = Routing(NCLS, 16)(h)
    out = keras.layers.Lambda(lambda v: tf.norm(v, axis=-1))(caps)
    m = keras.Model(inp, out)
    m.compile(keras.optimizers.Adam(1e-3),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(46)
    x, y = make_data(rng)
    t0 = time.perf_counter()
    timer = StepTimer()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=1).repeat().batch(BATCH).prefetch(2)
    hist = build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = "acc=%.3f sec/step=%.4f" % (hist.history["accuracy"][-1], full)
    if truth:
        xb, yb = next(iter(ds))
        t2 = StepTimer()
        build().fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                    epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit("truth_input_fraction", frac)
        msg += " compute=%.4f truth=%.3f" % (comp, frac)
    print("compute_capsnet_fit_sonar: %s wall_fit=%.1fs" % (msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
