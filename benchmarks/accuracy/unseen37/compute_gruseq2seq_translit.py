"""Name transliteration (Latin -> Cyrillic-like alphabet) with a GRU encoder-decoder.

Source/target character-id arrays are generated once into numpy; each step
slices a contiguous batch from them (cheap).  A GRU encoder summarises the
source name, a GRU decoder with teacher forcing emits the target characters;
training runs in a custom tf.function loop where the recurrent math dominates.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 64
STEPS = 150
N_NAMES = 6400
SRC_LEN = 24
TGT_LEN = 26
SRC_VOCAB = 30
TGT_VOCAB = 40
UNITS = 256
BOS = 1


def make_pairs(seed=0):
    rng = np.random.default_rng(seed)
    table = rng.integers(3, TGT_VOCAB, (SRC_VOCAB, 2))
    src = np.zeros((N_NAMES, SRC_LEN), np.int32)
    tgt = np.zeros((N_NAMES, TGT_LEN + 1), np.int32)
    for i in range(N_NAMES):
        n = int(rng.integers(4, SRC_LEN))
        s = rng.integers(3, SRC_VOCAB, n)
        src[i, :n] = s
        out = [BOS]
        for c in s:
            out.extend(table[c][: 1 + (c % 3 == 0)].tolist())
        out = out[: TGT_LEN + 1]
        tgt[i, : len(out)] = out
    return src, tgt


class Seq2Seq(keras.Model):
    def __init__(self):
        super().__init__()
        self.src_emb = keras.layers.Embedding(SRC_VOCAB, 64, mask_zero=False)
        self.tgt_emb = keras.layers.Embedding(TGT_VOCAB, 64)
        self.encoder = keras.layers.GRU(UNITS, return_sequences=True, return_state=True)
        self.encoder2 = keras.layers.GRU(UNITS, return_state=True)
        self.decoder = keras.layers.GRU(UNITS, return_sequences=True)
        self.out = keras.layers.Dense(TGT_VOCAB)

    def call(self, src, tgt_in):
        seq, _ = self.encoder(self.src_emb(src))
        _, state = self.encoder2(seq)
        dec = self.decoder(self.tgt_emb(tgt_in), initial_state=state)
        return self.out(dec)


def train(next_batch):
    keras.utils.set_random_seed(1)
    model = Seq2Seq()
    opt = keras.optimizers.Adam(1e-3)
    xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(src, tgt):
        with tf.GradientTape() as tape:
            logits = model(src, tgt[:, :-1])
            loss = xent(tgt[:, 1:], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, losses = [], []
    for step in range(STEPS):
        src, tgt = next_batch(step)
        losses.append(float(train_step(src, tgt)))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), float(np.mean(losses[-20:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_compute_gruseq2seq_translit_")
    try:
        t0 = time.perf_counter()
        src, tgt = make_pairs()
        n_batches = N_NAMES // BATCH

        def next_batch(step):
            s = (step % n_batches) * BATCH
            return src[s:s + BATCH], tgt[s:s + BATCH]

        full, loss = train(next_batch)
        emit("steps_per_second", 1.0 / full)
        msg = "compute_gruseq2seq_translit: %.1f ms/step, loss %.3f" % (full * 1e3, loss)
        if args.truth:
            batch = next_batch(0)
            compute, _ = train(lambda step: batch)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
