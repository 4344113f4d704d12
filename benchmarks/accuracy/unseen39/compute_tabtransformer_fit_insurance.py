"""Motor-insurance claim-severity banding with a TabTransformer.

A synthetic policy table (24 categorical columns such as vehicle make, region
and cover type plus 8 numeric columns) is built in memory as integer/float
numpy arrays; model.fit trains a TabTransformer whose column embeddings go
through four multi-head self-attention blocks, so each step is attention math.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, EPOCHS, NB = 256, 2, 70
NCAT, NNUM, CARD, D, LAYERS, HEADS = 24, 8, 64, 64, 3, 4


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


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_table(rng, n):
    cat = rng.integers(0, CARD, (n, NCAT)).astype(np.int32)
    num = rng.normal(0, 1, (n, NNUM)).astype(np.float32)
    score = (cat[:, 0] % 7) * 0.3 + (cat[:, 3] == cat[:, 5]) + num[:, 0] + 0.5 * num[:, 2] * (cat[:, 1] > 32)
    y = np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75])).astype(np.int32)
    return cat, num, y


def build_model():
    cat_in = keras.Input((NCAT,), dtype="int32", name="cat")
    num_in = keras.Input((NNUM,), name="num")
    offsets = tf.constant(np.arange(NCAT) * CARD, tf.int32)
    tok = keras.layers.Embedding(NCAT * CARD, D)(cat_in + offsets)
    for _ in range(LAYERS):
        a = keras.layers.MultiHeadAttention(HEADS, D // HEADS)(tok, tok)
        tok = keras.layers.LayerNormalization()(tok + a)
        f = keras.layers.Dense(4 * D, activation="gelu")(tok)
        f = keras.layers.Dense(D)(f)
        tok = keras.layers.LayerNormalization()(tok + f)
    h = keras.layers.Concatenate()([keras.layers.Flatten()(tok), keras.layers.LayerNormalization()(num_in)])
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(4, activation="softmax")(h)
    m = keras.Model([cat_in, num_in], out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_compute_tabtransformer_fit_insurance_")
    try:
        cat, num, y = make_table(rng, BATCH * NB)
        model = build_model()
        st = StepTimer()
        model.fit({"cat": cat, "num": num}, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"compute_tabtransformer_fit_insurance: {1.0/full:.2f} steps/s"
        if truth:
            batch = ({"cat": cat[:BATCH], "num": num[:BATCH]}, y[:BATCH])
            m2 = build_model()
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=NB, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f} ({full*1e3:.1f} vs {comp*1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
