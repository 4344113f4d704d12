"""Duplicate-question finder for a developer Q&A forum.

Tokenised question titles+bodies (hashed ids) with their duplicate-cluster ids
are generated in memory and fed to a short model.fit of a small text encoder;
at every epoch end a callback embeds the full question archive with
model.predict, scores recall@10 of known duplicates and runs model.evaluate on
a large held-out split, which is where most of the wall time goes.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 64, 20, 4
SEQ, VOCAB, NCLUST = 64, 30000, 400
NTRAIN, NARCHIVE, NHOLD = 8192, 40000, 20000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_questions(rng, n):
    clust = rng.integers(0, NCLUST, n).astype(np.int32)
    x = rng.integers(1, VOCAB, (n, SEQ)).astype(np.int32)
    keyw = (clust[:, None] * 37 + np.arange(12)[None, :]) % VOCAB + 1
    pos = rng.integers(0, SEQ, (n, 12))
    np.put_along_axis(x, pos, keyw, axis=1)
    return x, clust


class RetrievalEval(keras.callbacks.Callback):
    """Epoch-end duplicate retrieval on the archive plus a held-out evaluate."""
    def __init__(self, archive, arch_clust, hold, hold_clust):
        super().__init__()
        self.archive, self.arch_clust = archive, arch_clust
        self.hold, self.hold_clust = hold, hold_clust
        self.seconds = 0.0
        self.recall = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        encoder = keras.Model(self.model.inputs, self.model.get_layer("embedding_out").output)
        emb = encoder.predict(self.archive, batch_size=512, verbose=0)
        emb /= np.linalg.norm(emb, axis=1, keepdims=True) + 1e-6
        q = emb[:1000]
        sims = q @ emb.T
        sims[np.arange(1000), np.arange(1000)] = -1.0
        top = np.argpartition(-sims, 10, axis=1)[:, :10]
        self.recall = float(np.mean(self.arch_clust[top] == self.arch_clust[:1000, None]))
        self.model.evaluate(self.hold, self.hold_clust, batch_size=512, verbose=0)
        self.seconds += time.perf_counter() - t


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 64)(inp)
    x = keras.layers.Conv1D(128, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, name="embedding_out")(x)
    out = keras.layers.Dense(NCLUST, activation="softmax")(keras.layers.Activation("relu")(x))
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds, evalcb):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, evalcb], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_eval_dupretrieval_callback_forumquestions_")
    try:
        rng = np.random.default_rng(SEED)
        xtr, ytr = make_questions(rng, NTRAIN)
        arch, arch_c = make_questions(rng, NARCHIVE)
        hold, hold_c = make_questions(rng, NHOLD)
        ds = tf.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(NTRAIN, seed=SEED).repeat().batch(BATCH).prefetch(2)
        cb = RetrievalEval(arch, arch_c, hold, hold_c)
        full = train(ds, cb)
        wall = time.perf_counter() - T0
        emit("steps_per_second", 1.0 / full)
        msg = (f"full {full * 1000:.1f} ms/step, recall@10 {cb.recall:.3f}, "
               f"eval {cb.seconds:.1f} s of {wall:.1f} s ({100 * cb.seconds / wall:.0f}%)")
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors(batch).repeat(),
                         RetrievalEval(arch, arch_c, hold, hold_c))
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"eval_dupretrieval_callback_forumquestions: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
