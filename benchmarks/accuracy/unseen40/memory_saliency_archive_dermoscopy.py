"""Skin-lesion triage from dermoscopy crops: synthetic 96x96 RGB lesion images are held
in memory and a CNN is trained with a @tf.function GradientTape loop. For a later
explainability review, every step also computes input-gradient saliency maps and
appends them, together with a copy of the batch, to a Python list that is never trimmed.
"""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
SIZE = 96
N = 1024
N_CLASSES = 3
BATCH = 32
STEPS = 320


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_lesions():
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    y = rng.integers(0, N_CLASSES, N).astype(np.int32)
    x = np.empty((N, SIZE, SIZE, 3), np.float32)
    skin = np.array([0.85, 0.65, 0.55], np.float32)
    for i in range(N):
        cy, cx = rng.uniform(35, 61, 2)
        r = rng.uniform(12, 25)
        ang = np.arctan2(yy - cy, xx - cx)
        border = r * (1 + (0.05 + 0.15 * y[i]) * np.sin(rng.integers(3, 9) * ang))
        inside = (np.hypot(yy - cy, xx - cx) < border)[..., None]
        lesion = np.array([0.45, 0.3, 0.2]) * rng.uniform(0.6, 1.0) - 0.1 * y[i]
        x[i] = np.where(inside, lesion, skin) + 0.04 * rng.normal(size=(SIZE, SIZE, 3))
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(128, 3, strides=2, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_CLASSES),
    ])


def run(batches, archive):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
            picked = tf.reduce_sum(tf.gather(logits, y, batch_dims=1))
        grads = tape.gradient(loss, model.trainable_variables)
        saliency = tf.abs(tape.gradient(picked, x))
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, saliency

    times, loss = [], float("nan")
    for s in range(STEPS):
        xb, yb = batches(s)
        loss_t, sal = step(xb, yb)
        loss = float(loss_t)
        times.append(time.perf_counter())
        archive.append({"step": s, "images": np.array(xb, copy=True), "labels": np.array(yb), "saliency": sal.numpy()})
    return float(np.mean(np.diff(times)[5:])), loss


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    truth = "--truth" in sys.argv
    x, y = make_lesions()
    rng = np.random.default_rng(SEED)
    nb = N // BATCH

    def batches(s):
        if s % nb == 0:
            perm = rng.permutation(N)
            batches.order = perm
        idx = batches.order[(s % nb) * BATCH:(s % nb + 1) * BATCH]
        return x[idx], y[idx]

    archive = []
    full, loss = run(batches, archive)
    append_out({"steps_per_second": 1.0 / full})
    msg = f"dermoscopy saliency archive: {full*1000:.1f} ms/step, loss {loss:.3f}, {len(archive)} entries, RSS {rss_mib():.0f} MiB"
    if truth:
        archive.clear()
        fixed = (x[:BATCH], y[:BATCH])
        comp, _ = run(lambda s: fixed, [])
        frac = min(max((full - comp) / full, 0.0), 1.0)
        append_out({"truth_input_fraction": frac})
        msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
