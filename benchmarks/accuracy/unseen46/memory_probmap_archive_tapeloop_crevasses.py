"""Crevasse mapping on glacier SAR amplitude tiles (64x64, two polarisations,
generated in memory).  Training is a @tf.function GradientTape step in a
Python loop over in-memory numpy batches; for a later "uncertainty
review", the loop appends every batch's predicted probability maps and
input tiles (as numpy copies) to a list that is never trimmed, so resident
memory grows steadily for the whole run."""
import os, sys, json, time, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, N, S, NCLS = 48, 300, 2400, 64, 4


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_data(rng):
    x = rng.gamma(2.0, 0.5, (N, S, S, 2)).astype(np.float32)
    y = np.zeros((N, S, S), np.int32)
    yy, xx = np.mgrid[0:S, 0:S]
    for i in range(N):
        a = rng.uniform(0, np.pi)
        band = np.abs(np.sin(a) * xx - np.cos(a) * yy + rng.uniform(-20, 20)) < rng.uniform(1, 3)
        y[i][band] = 1 + (i % 3)
        x[i][band] *= 0.2
    return x, y


def build():
    keras.utils.set_random_seed(61)
    inp = keras.Input((S, S, 2))
    h = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    d = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(h)
    u = keras.layers.UpSampling2D()(d)
    h = keras.layers.Concatenate()([h, u])
    h = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(h)
    return keras.Model(inp, keras.layers.Conv2D(NCLS, 1)(h))


def train(model, batches):
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = lossf(y, logits)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss, tf.nn.softmax(logits)

    review = []          # kept "for the uncertainty review" -- never trimmed
    times, loss = [], 0.0
    for k in range(STEPS):
        x, y = batches(k)
        l, probs = step(x, y)
        loss = float(l)
        times.append(time.perf_counter())
        review.append({"step": k, "tiles": np.array(x), "probs": probs.numpy(), "mask": np.array(y)})
    held = sum(r["tiles"].nbytes + r["probs"].nbytes + r["mask"].nbytes for r in review)
    return float(np.mean(np.diff(times)[5:])), loss, held


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(46)
    x, y = make_data(rng)
    order = np.random.default_rng(1).permutation(N)

    def batches(k):
        s = (k * BATCH) % (N - BATCH)
        sel = order[s:s + BATCH]
        return x[sel], y[sel]

    t0 = time.perf_counter()
    full, loss, held = train(build(), batches)
    emit("steps_per_second", 1.0 / full)
    msg = "loss=%.4f sec/step=%.4f review_list=%.2fGiB" % (loss, full, held / 2 ** 30)
    if truth:
        x0, y0 = batches(0)
        comp, _, _ = train(build(), lambda k: (x0, y0))
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit("truth_input_fraction", frac)
        msg += " compute=%.4f truth=%.3f" % (comp, frac)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    print("memory_probmap_archive_tapeloop_crevasses: %s peak_rss=%.2fGiB wall=%.1fs" % (msg, peak, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
