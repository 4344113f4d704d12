"""Learning-to-rank for an IT help-desk knowledge base with BM25 features.

Synthetic KB articles and user queries are held as token lists; for every
training batch a Python function scores each (query, article) pair with
BM25, TF-IDF cosine and term-proximity features using collections.Counter,
and a custom @tf.function GradientTape step trains a pointwise ranking MLP.
"""
import os, sys, json, time, math, tempfile, shutil
from collections import Counter
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS = 128, 650
N_DOCS, N_Q, VOCAB = 3000, 4000, 5000
K1, B = 1.2, 0.75
WINDOW, NF = 12, 9


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_corpus(rng):
    topics = rng.integers(0, 60, N_DOCS)
    topic_words = rng.integers(0, VOCAB, (60, 40))
    docs = []
    for t in topics:
        n = int(rng.integers(80, 200))
        own = topic_words[t][rng.integers(0, 40, n // 2)]
        bg = rng.zipf(1.3, n - n // 2) % VOCAB
        docs.append([int(w) for w in np.concatenate([own, bg])])
    qtopic = rng.integers(0, 60, N_Q)
    queries = [[int(w) for w in topic_words[t][rng.integers(0, 40, int(rng.integers(3, 8)))]] for t in qtopic]
    return docs, topics, queries, qtopic


class Index:
    def __init__(self, docs):
        self.tf = [Counter(d) for d in docs]
        self.len = [len(d) for d in docs]
        self.docs = docs
        self.avgdl = sum(self.len) / len(docs)
        df = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def features(self, q, d):
        tf_d, dl = self.tf[d], self.len[d]
        bm25 = 0.0; hits = 0; idf_sum = 0.0
        for w in q:
            f = tf_d.get(w, 0)
            idf = self.idf.get(w, 0.0)
            idf_sum += idf
            if f:
                hits += 1
                bm25 += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * dl / self.avgdl))
        qc = Counter(q)
        num = sum(qc[w] * tf_d.get(w, 0) * self.idf.get(w, 0) ** 2 for w in qc)
        dn = math.sqrt(sum((c * self.idf.get(w, 0)) ** 2 for w, c in tf_d.items()))
        qn = math.sqrt(sum((c * self.idf.get(w, 0)) ** 2 for w, c in qc.items()))
        cos = num / (dn * qn + 1e-9)
        pos = [i for i, w in enumerate(self.docs[d]) if w in qc]
        span = (pos[-1] - pos[0]) / dl if len(pos) > 1 else 1.0
        doc = self.docs[d]
        best = 0
        for i in range(0, dl - WINDOW + 1, 2):   # densest 12-token passage
            seen = set()
            for w in doc[i:i + WINDOW]:
                if w in qc:
                    seen.add(w)
            if len(seen) > best:
                best = len(seen)
        qbi = set(zip(q, q[1:]))
        bigrams = sum(1 for ab in zip(doc, doc[1:]) if ab in qbi)
        return [bm25 / 20.0, cos, hits / len(q), idf_sum / (8 * len(q)), span, dl / 200.0,
                len(pos) / dl, best / len(qc), bigrams / 5.0]


def make_batch(index, queries, qtopic, topics, rng):
    x = np.empty((BATCH, NF), np.float32)
    y = np.empty((BATCH, 1), np.float32)
    for i in range(BATCH):
        qi = int(rng.integers(0, N_Q))
        if i % 2:
            cands = np.flatnonzero(topics == qtopic[qi])
            d = int(cands[rng.integers(0, len(cands))])
        else:
            d = int(rng.integers(0, N_DOCS))
        x[i] = index.features(queries[qi], d)
        y[i, 0] = float(topics[d] == qtopic[qi])
    return x, y


def build_model():
    inp = keras.Input((NF,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(batches_fn):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for s in range(STEPS):
        x, y = batches_fn()
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)[5:]
    return float(np.mean(gaps)), loss


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_bm25_tapeloop_helpdesk_")
    try:
        docs, topics, queries, qtopic = make_corpus(rng)
        index = Index(docs)
        full, loss = train(lambda: make_batch(index, queries, qtopic, topics, rng))
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_bm25_tapeloop_helpdesk: {1.0/full:.1f} steps/s, loss={loss:.3f}"
        if truth:
            fixed = make_batch(index, queries, qtopic, topics, rng)
            comp, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f} ({full*1e3:.1f} vs {comp*1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
