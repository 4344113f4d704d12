"""item2vec-style track embeddings for a music-streaming service.

Listening sessions (lists of track ids) are held as Python lists.  For each
training step a pure-Python routine walks the sessions, emits skip-gram
(center, context) pairs inside a random window and draws negative tracks from a
unigram^0.75 table with random.choices; the resulting numpy arrays feed a custom
tf.function training step (two embedding tables, dot-product logits, BCE loss).
"""
import argparse, itertools, json, os, random, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

VOCAB = 30000
DIM = 128
BATCH = 2048          # (center, context) rows per step, positives + negatives
WINDOW = 4
NEG = 4
STEPS = 400
N_SESSIONS = 20000


def make_sessions(seed=0):
    rng = np.random.default_rng(seed)
    n_genres = 60
    genre_of = rng.integers(0, n_genres, VOCAB)
    by_genre = [np.flatnonzero(genre_of == g) for g in range(n_genres)]
    pop = rng.zipf(1.3, VOCAB).astype(np.float64)
    sessions = []
    for _ in range(N_SESSIONS):
        g = int(rng.integers(0, n_genres))
        pool = by_genre[g]
        p = pop[pool] / pop[pool].sum()
        sessions.append([int(t) for t in rng.choice(pool, size=int(rng.integers(8, 40)), p=p)])
    counts = np.bincount(np.concatenate([np.asarray(s) for s in sessions]), minlength=VOCAB)
    return sessions, counts


class PairSampler:
    def __init__(self, sessions, counts, seed=0):
        self.sessions = sessions
        self.rnd = random.Random(seed)
        w = (counts.astype(np.float64) + 1.0) ** 0.75
        self.cum = list(itertools.accumulate(w.tolist()))
        self.population = list(range(VOCAB))
        self.pending = []

    def _session_pairs(self, s):
        rnd = self.rnd
        out = []
        for i, center in enumerate(s):
            w = rnd.randint(1, WINDOW)
            for j in range(max(0, i - w), min(len(s), i + w + 1)):
                if j == i:
                    continue
                out.append((center, s[j], 1.0))
                for neg in rnd.choices(self.population, cum_weights=self.cum, k=NEG):
                    if neg != s[j]:
                        out.append((center, neg, 0.0))
        return out

    def next_batch(self):
        while len(self.pending) < BATCH:
            self.pending.extend(self._session_pairs(self.rnd.choice(self.sessions)))
        rows, self.pending = self.pending[:BATCH], self.pending[BATCH:]
        rnd = self.rnd
        rnd.shuffle(rows)
        c, x, y = zip(*rows)
        return (np.asarray(c, np.int32), np.asarray(x, np.int32), np.asarray(y, np.float32))


class Item2Vec(keras.Model):
    def __init__(self):
        super().__init__()
        self.target = keras.layers.Embedding(VOCAB, DIM, name="target")
        self.context = keras.layers.Embedding(VOCAB, DIM, name="context")

    def call(self, centers, contexts):
        return tf.reduce_sum(self.target(centers) * self.context(contexts), axis=-1)


def train(next_batch):
    keras.utils.set_random_seed(1)
    model = Item2Vec()
    opt = keras.optimizers.Adam(1e-3)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(c, x, y):
        with tf.GradientTape() as tape:
            loss = bce(y, model(c, x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, losses = [], []
    for step in range(STEPS):
        c, x, y = next_batch()
        losses.append(float(train_step(c, x, y)))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), float(np.mean(losses[-50:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_input_skipgram_playlists_")
    try:
        t0 = time.perf_counter()
        sessions, counts = make_sessions()
        full, loss = train(PairSampler(sessions, counts).next_batch)
        emit("steps_per_second", 1.0 / full)
        msg = "input_skipgram_playlists: %.1f ms/step, loss %.3f" % (full * 1e3, loss)
        if args.truth:
            batch = PairSampler(sessions, counts, seed=1).next_batch()
            compute, _ = train(lambda: batch)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
