"""Subtitle/caption timing: predict the per-token display-time offset of subtitle
cues from token ids of the dialogue line (sequence length 64). All batches are
pre-built as tensors before training; a transformer encoder is trained in a
custom tf.GradientTape loop compiled with tf.function.
Intended bottleneck: COMPUTE (attention + feed-forward layers)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
SEED, BATCH, STEPS, EPOCHS = 75, 16, 50, 3
SEQ, VOCAB, DM, HEADS, LAYERS = 64, 4000, 96, 4, 2


class Block(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.att = keras.layers.MultiHeadAttention(HEADS, DM // HEADS)
        self.ff1 = keras.layers.Dense(DM * 4, activation="gelu")
        self.ff2 = keras.layers.Dense(DM)
        self.n1 = keras.layers.LayerNormalization()
        self.n2 = keras.layers.LayerNormalization()

    def call(self, x):
        x = self.n1(x + self.att(x, x))
        return self.n2(x + self.ff2(self.ff1(x)))


def make_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, DM)(inp)
    for _ in range(LAYERS):
        h = Block()(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


def train(batches):
    model = make_model()
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True)[..., 0] - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for ep in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batches[(ep * STEPS + s) % len(batches)]
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


def main():
    rng = np.random.default_rng(SEED)
    batches = []
    for _ in range(40):
        tok = rng.integers(1, VOCAB, (BATCH, SEQ)).astype(np.int32)
        y = (np.cumsum(tok % 7, axis=1) / 100.0).astype(np.float32)
        batches.append((tf.constant(tok), tf.constant(y)))
    full, loss = train(batches)
    compute = None
    if TRUTH:
        compute, _ = train([batches[0]])
    report("compute_transformer_tapeloop_subtitletiming", full, compute, f"loss={loss:.3f}")


if __name__ == "__main__":
    main()
