"""Product-search query encoder with an embedding-drift audit log.

Hashed query/product token pairs are synthesised in memory and fed with
tf.data to a two-tower retrieval model; for a later drift report, a callback
copies the 40k x 64 query-embedding table to a numpy array after every
training batch and keeps every copy in a Python list, so RSS climbs steadily.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 1024, 105, 2
VOCAB, DIM, SEQ = 40000, 64, 12


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class DriftLog(keras.callbacks.Callback):
    def __init__(self, layer_name):
        super().__init__(); self.layer_name = layer_name; self.snapshots = []
    def on_train_batch_end(self, batch, logs=None):
        table = self.model.get_layer(self.layer_name).embeddings
        self.snapshots.append(np.array(table.numpy(), copy=True))
    def drift(self):
        return float(np.linalg.norm(self.snapshots[-1] - self.snapshots[0]))


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_pairs(rng, n):
    q = (rng.zipf(1.3, (n, SEQ)) % VOCAB).astype(np.int32)
    p = q.copy()
    p[:, SEQ // 2:] = (rng.zipf(1.3, (n, SEQ - SEQ // 2)) % VOCAB)
    return q, p


def build_model():
    qi = keras.Input((SEQ,), dtype="int32")
    pi = keras.Input((SEQ,), dtype="int32")
    qe = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(VOCAB, DIM, name="query_emb")(qi))
    pe = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(VOCAB, DIM, name="prod_emb")(pi))
    qv = keras.layers.Dense(DIM)(keras.layers.Dense(512, activation="relu")(qe))
    pv = keras.layers.Dense(DIM)(keras.layers.Dense(512, activation="relu")(pe))
    logits = keras.layers.Dot(axes=1)([qv, pv])
    m = keras.Model([qi, pi], logits)
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def to_ds(q, p, rng):
    neg = p[rng.permutation(len(p))]
    x = (np.concatenate([q, q]), np.concatenate([p, neg]))
    y = np.concatenate([np.ones(len(q)), np.zeros(len(q))]).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(y), seed=39).repeat().batch(BATCH)


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_memory_embedding_drift_log_search_")
    try:
        q, p = make_pairs(rng, 60000)
        ds = to_ds(q, p, rng)
        model = build_model()
        st, dl = StepTimer(), DriftLog("query_emb")
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st, dl], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = (f"memory_embedding_drift_log_search: {1.0/full:.1f} steps/s, {len(dl.snapshots)} snapshots "
               f"({sum(s.nbytes for s in dl.snapshots)/2**30:.2f} GiB), drift={dl.drift():.3f}")
        dl.snapshots.clear()
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            st2, dl2 = StepTimer(), DriftLog("query_emb")
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2, dl2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
