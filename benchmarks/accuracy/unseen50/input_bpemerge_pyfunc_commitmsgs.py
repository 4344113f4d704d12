"""Commit-message intent tagging (fix / feature / refactor / docs) for a code-review bot.
Synthetic commit messages (subject line plus a free-text body) are held in memory as strings; a byte-pair-encoding merge table is
learned once at start-up, and a serial tf.data map calls tf.py_function to apply the BPE merges
word by word in Python (lowest-rank-pair loop), pad to a fixed length and feed an
Embedding + Conv1D classifier through model.fit.
"""
import collections
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N_MSG = 4000
N_MERGES = 300
MAXLEN = 256
BATCH = 32
STEPS = 100
EPOCHS = 2

VERBS = {0: ["fix", "resolve", "patch", "handle", "guard"],
         1: ["add", "implement", "introduce", "support", "enable"],
         2: ["refactor", "rename", "extract", "simplify", "restructure"],
         3: ["document", "update readme for", "clarify docs of", "describe", "annotate"]}
NOUNS = ["parser", "scheduler", "cache invalidation", "login handler", "config loader", "retry policy",
         "websocket reconnect", "metrics exporter", "pagination", "serializer", "rate limiter",
         "migration script", "dependency graph", "thumbnail generator", "search indexer", "tokenizer"]
TAILS = ["when input is empty", "for large payloads", "in the worker pool", "behind feature flag",
         "to avoid race condition", "under high concurrency", "for unicode filenames", "on windows",
         "with exponential backoff", "in integration tests", "and clean up leftovers", ""]
BODY_WORDS = ("the this change makes sure we now call when request user session token timeout value "
              "handler worker queue retry config default path file buffer stream index cache entry "
              "should would previously because otherwise returns raises error exception null empty "
              "list dict key test tests coverage benchmark latency memory thread lock async await "
              "get set update delete create parse load save flush close open read write").split()


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_messages(rng):
    msgs, labels = [], []
    for i in range(N_MSG):
        lab = int(rng.integers(4))
        parts = [VERBS[lab][int(rng.integers(5))], NOUNS[int(rng.integers(len(NOUNS)))],
                 TAILS[int(rng.integers(len(TAILS)))]]
        if rng.random() < 0.5:
            parts.append(f"(#{int(rng.integers(100, 9999))})")
        if rng.random() < 0.4:
            parts.append("; also " + NOUNS[int(rng.integers(len(NOUNS)))] + " " + TAILS[int(rng.integers(len(TAILS)))])
        body = []
        for _ in range(int(rng.integers(25, 60))):
            r = rng.random()
            if r < 0.15:
                body.append("_".join(BODY_WORDS[int(k)] for k in rng.integers(0, len(BODY_WORDS), 3)) + "()")
            elif r < 0.2:
                body.append("%07x" % int(rng.integers(0, 1 << 28)))
            else:
                body.append(BODY_WORDS[int(rng.integers(len(BODY_WORDS)))])
        msgs.append(" ".join(p for p in parts if p) + "\n\n" + " ".join(body))
        labels.append(lab)
    return msgs, np.asarray(labels, np.int32)


def learn_bpe(msgs):
    words = collections.Counter(w for m in msgs[:150] for w in m.lower().split())
    vocab = {tuple(w) + ("</w>",): c for w, c in words.items()}
    merges = []
    for _ in range(N_MERGES):
        pairs = collections.Counter()
        for sym, c in vocab.items():
            for a, b in zip(sym, sym[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = max(pairs, key=pairs.get)
        merges.append(best)
        new_vocab = {}
        for sym, c in vocab.items():
            out, i = [], 0
            while i < len(sym):
                if i < len(sym) - 1 and (sym[i], sym[i + 1]) == best:
                    out.append(sym[i] + sym[i + 1]); i += 2
                else:
                    out.append(sym[i]); i += 1
            new_vocab[tuple(out)] = c
        vocab = new_vocab
    return merges


class BPE:
    def __init__(self, merges):
        self.ranks = {p: i for i, p in enumerate(merges)}
        toks = sorted({a for p in merges for a in p} | {a + b for a, b in merges})
        self.ids = {t: i + 2 for i, t in enumerate(toks)}   # 0 pad, 1 unk
        self.size = len(self.ids) + 2

    def encode_word(self, word):
        sym = list(word) + ["</w>"]
        while len(sym) > 1:
            pairs = [(self.ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(sym, sym[1:]))]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            sym = sym[:i] + [sym[i] + sym[i + 1]] + sym[i + 2:]
        return [self.ids.get(s, 1) for s in sym]

    def encode(self, text):
        out = []
        for w in text.lower().split():
            out.extend(self.encode_word(w))
        out = out[:MAXLEN]
        return np.asarray(out + [0] * (MAXLEN - len(out)), np.int32)


def make_model(vocab_size):
    inp = keras.Input((MAXLEN,), dtype="int32")
    x = keras.layers.Embedding(vocab_size, 48)(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_bpemerge_pyfunc_commitmsgs_")
    try:
        msgs, labels = make_messages(np.random.default_rng(SEED))
        bpe = BPE(learn_bpe(msgs))

        def encode(text):
            return bpe.encode(text.numpy().decode("utf-8"))

        def to_ids(text, label):
            ids = tf.py_function(encode, [text], tf.int32)
            ids.set_shape((MAXLEN,))
            return ids, label

        ds = (tf.data.Dataset.from_tensor_slices((msgs, labels))
              .shuffle(N_MSG, seed=SEED).repeat()
              .map(to_ids)
              .batch(BATCH).prefetch(1))
        model = make_model(bpe.size)
        timer = StepTimer()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = make_model(bpe.size)
            timer2 = StepTimer()
            model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_bpemerge_pyfunc_commitmsgs: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
