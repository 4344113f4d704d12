"""Church bell-ringing peal records -> change-ringing method (Plain Bob, Grandsire, ...).

Input path: every peal extract (64 consecutive rows of 8 bells, one-hot bell
positions) is generated once and converted to tf.Tensors before training;
a custom @tf.function GradientTape step sweeps over the pre-built tensors.
The model is a wide MLP.  Expected bottleneck: compute.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, N_BATCHES = 256, 240, 16
ROWS, BELLS = 32, 8
METHODS = ["Plain Bob Major", "Grandsire Triples", "Stedman Triples", "Cambridge Surprise Major",
           "Yorkshire Surprise Major", "Kent Treble Bob Major", "Double Norwich", "Bristol Surprise Major"]
NFEAT = ROWS * BELLS * BELLS


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def peal_extract(rng, method):
    row = np.arange(BELLS)
    out = np.zeros((ROWS, BELLS, BELLS), np.float32)
    place = method % (BELLS - 1)
    for r in range(ROWS):
        out[r, np.arange(BELLS), row] = 1.0
        swap = [i for i in range(0, BELLS - 1, 2) if i != place] if r % 2 == 0 else \
               [i for i in range(1, BELLS - 1, 2) if i != (place + method) % (BELLS - 1)]
        for i in swap:
            row[[i, i + 1]] = row[[i + 1, i]]
        if rng.random() < 0.05:                    # conductor's call (bob/single)
            j = rng.integers(0, BELLS - 1)
            row[[j, j + 1]] = row[[j + 1, j]]
    return out.reshape(-1)


def build_batches(seed):
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(N_BATCHES):
        y = rng.integers(0, len(METHODS), BATCH).astype(np.int32)
        x = np.stack([peal_extract(rng, m) for m in y])
        batches.append((tf.constant(x), tf.constant(y)))
    return batches


def build_model():
    return keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(len(METHODS)),
    ])


def train(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], None
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


keras.utils.set_random_seed(81)
batches = build_batches(81)
full, last_loss = train(lambda s: batches[s % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print("bellringers: %.1f ms/step, final loss %.3f, wall so far %.1f s" % (full * 1e3, last_loss, time.perf_counter() - T0))
if TRUTH:
    fixed = batches[0]
    compute, _ = train(lambda s: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("bellringers truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
