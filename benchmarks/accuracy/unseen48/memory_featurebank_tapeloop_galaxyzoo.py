"""Galaxy morphology embedding for a citizen-science survey: a small conv encoder is trained
with a contrastive (two-view) loss on synthetic galaxy cut-outs generated in memory, in a
@tf.function GradientTape loop. A "feature bank" meant to hold recent embeddings and their
cut-outs for hard-negative mining is appended every step and never trimmed, so resident
memory climbs steadily through training."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, SIZE, BATCH, STEPS, EPOCHS, N_IMG = 48, 48, 128, 130, 3, 2048


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_galaxies(n):
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) - SIZE / 2
    out = np.empty((n, SIZE, SIZE, 3), np.float32)
    for i in range(n):
        ang, ell = rng.uniform(0, np.pi), rng.uniform(0.3, 1.0)
        xr = xx * np.cos(ang) + yy * np.sin(ang)
        yr = (-xx * np.sin(ang) + yy * np.cos(ang)) / ell
        r = np.hypot(xr, yr)
        arms = 1 + 0.5 * np.sin(2 * np.arctan2(yr, xr) + r / rng.uniform(2, 6)) * (i % 2)
        img = np.exp(-r / rng.uniform(3, 8)) * arms
        out[i] = img[..., None] * rng.uniform(0.6, 1.0, 3) + rng.normal(0, 0.03, (SIZE, SIZE, 3))
    return out


def augment(x, rng):
    x = x[:, :, ::-1] if rng.random() < 0.5 else x
    return x * rng.uniform(0.8, 1.2) + rng.normal(0, 0.02, x.shape).astype(np.float32)


def build():
    keras.utils.set_random_seed(SEED)
    enc = keras.Sequential([keras.Input((SIZE, SIZE, 3)),
                            keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                            keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                            keras.layers.GlobalAveragePooling2D(),
                            keras.layers.Dense(64)])
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(a, b):
        with tf.GradientTape() as tape:
            za = tf.math.l2_normalize(enc(a, training=True), -1)
            zb = tf.math.l2_normalize(enc(b, training=True), -1)
            logits = tf.matmul(za, zb, transpose_b=True) / 0.1
            labels = tf.range(tf.shape(a)[0])
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        grads = tape.gradient(loss, enc.trainable_variables)
        opt.apply_gradients(zip(grads, enc.trainable_variables))
        return loss, za
    return step


def train(step, batch_fn):
    bank = []  # hard-negative feature bank: (embeddings, view_a) for every step, never trimmed
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            a, b = batch_fn(epoch, s)
            loss_t, z = step(a, b)
            loss = float(loss_t)
            t = time.perf_counter()
            bank.append((z.numpy(), np.array(a)))
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    bank_mb = sum(e.nbytes + va.nbytes for e, va in bank) / 2 ** 20
    return sum(g) / len(g), loss, bank_mb


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_memory_featurebank_tapeloop_galaxyzoo_")
    try:
        imgs = make_galaxies(N_IMG)
        rng = np.random.default_rng(SEED)

        def batch_fn(epoch, s):
            idx = rng.integers(0, N_IMG, BATCH)
            base = imgs[idx]
            return augment(base, rng), augment(base, rng)

        full, loss, bank_mb = train(build(), batch_fn)
        emit("steps_per_second", 1.0 / full)
        msg = f"galaxy bank: loss={loss:.4f} step={full*1000:.1f}ms bank={bank_mb:.0f}MiB main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            fixed = batch_fn(0, 0)
            comp, _, _ = train(build(), lambda e, s: fixed)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
