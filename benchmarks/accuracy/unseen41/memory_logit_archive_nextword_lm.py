"""Next-word language model for customer-support chat transcripts (3000-token vocabulary).
Data path: synthetic token sequences from a Markov chain are held in memory and sliced into batches in a Python
loop that calls a @tf.function GradientTape step; for a later calibration study the loop keeps every step's full
per-token logits as numpy arrays in a list that is never trimmed, so the process RSS grows step after step."""
import argparse, itertools, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
VOCAB = 3000
SEQ = 16
BATCH = 32
N_SEQ = 20000
STEPS = 300


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_corpus(rng):
    nxt = rng.integers(0, VOCAB, (VOCAB, 4))
    toks = np.empty((N_SEQ, SEQ + 1), np.int32)
    cur = rng.integers(0, VOCAB, N_SEQ)
    for t in range(SEQ + 1):
        toks[:, t] = cur
        cur = np.where(rng.random(N_SEQ) < 0.8, nxt[cur, rng.integers(0, 4, N_SEQ)], rng.integers(0, VOCAB, N_SEQ))
    return toks


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 128)(inp)
    h = keras.layers.GRU(192, return_sequences=True)(h)
    return keras.Model(inp, keras.layers.Dense(VOCAB)(h))


def train(source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, logits

    archive = []          # every step's logits, kept for the calibration notebook
    stamps, loss = [], None
    for _, (x, y) in zip(range(STEPS), source):
        l, logits = step(x, y)
        loss = float(l)
        stamps.append(time.perf_counter())
        archive.append(logits.numpy())
    mb = sum(a.nbytes for a in archive) / 2**20
    return float(np.mean(np.diff(stamps)[5:])), loss, mb


def batches(toks, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(toks), BATCH)
        yield toks[idx, :SEQ], toks[idx, 1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_memory_logit_archive_nextword_lm_")
    try:
        toks = make_corpus(np.random.default_rng(SEED))
        full, loss, mb = train(batches(toks, SEED))
        emit({"steps_per_second": 1.0 / full})
        msg = f"memory_logit_archive_nextword_lm: {1.0 / full:.2f} steps/s, final loss {loss:.3f}, archived {mb:.0f} MiB of logits"
        if args.truth:
            bx, by = next(batches(toks, SEED))
            comp, _, _ = train(itertools.repeat((bx, by)))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
