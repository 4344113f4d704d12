"""Biology/pharmacy: antibody heavy-chain developability classifier. A small
Transformer encoder over tokenised CDR/framework sequences, data already
tokenised in memory and fed via tf.data (cache + prefetch) into model.fit.
Deliberate bottleneck: compute (the model), not input."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, SEQ, VOCAB, DM, HEADS, LAYERS = 32, 25, 2, 96, 25, 64, 4, 2


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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


def make_data(n, seed=66):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, VOCAB, (n, SEQ)).astype(np.int32)
    hydro = np.isin(x[:, 40:60], [3, 7, 11, 15]).mean(1)
    y = (hydro > np.median(hydro)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, DM)(inp)
    pos = keras.layers.Embedding(SEQ, DM)(keras.ops.arange(SEQ)[None, :])
    h = h + pos
    for _ in range(LAYERS):
        a = keras.layers.MultiHeadAttention(HEADS, DM // HEADS)(h, h)
        h = keras.layers.LayerNormalization()(h + a)
        f = keras.layers.Dense(4 * DM, activation="gelu")(h)
        f = keras.layers.Dense(DM)(f)
        h = keras.layers.LayerNormalization()(h + f)
    h = keras.layers.GlobalAveragePooling1D()(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step()


def main():
    x, y = make_data(BATCH * STEPS)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().repeat().batch(BATCH, drop_remainder=True).prefetch(2)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[compute_transformer_fit_antibodyseqs] full {full*1000:.1f} ms/step"
    if TRUTH:
        comp = run(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
