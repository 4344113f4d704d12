import time
_WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

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


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Next-chord prediction for chord progressions with a small causal
# Transformer, trained by a custom GradientTape loop. All batches are
# converted to tensors before training and reused, so the step time is the
# attention/feed-forward forward+backward pass inside a tf.function.
# ---------------------------------------------------------------------------
SEED = 60
VOCAB = 96          # 12 roots x 8 qualities
SEQ = 64
D = 128
HEADS = 4
FF = 512
BLOCKS = 2
BATCH = 32
N_BATCHES = 16
STEPS = 15
EPOCHS = 2


def make_progressions(rng, n):
    # circle-of-fifths style walks with occasional borrowed chords
    roots = np.cumsum(rng.choice([5, 7, 2, 9], size=(n, SEQ + 1), p=[0.5, 0.3, 0.1, 0.1]), axis=1) % 12
    qual = rng.choice(8, size=(n, SEQ + 1), p=[0.4, 0.3, 0.1, 0.05, 0.05, 0.04, 0.03, 0.03])
    return (roots * 8 + qual).astype(np.int32)


class AddPosition(keras.layers.Layer):
    def build(self, shape):
        self.pos = self.add_weight(shape=(SEQ, D), initializer="random_normal", name="pos")

    def call(self, h):
        return h + self.pos[None]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, D)(inp)
    h = AddPosition()(h)
    for _ in range(BLOCKS):
        a = keras.layers.MultiHeadAttention(HEADS, D // HEADS)(h, h, use_causal_mask=True)
        h = keras.layers.LayerNormalization()(h + a)
        f = keras.layers.Dense(FF, activation="gelu")(h)
        f = keras.layers.Dense(D)(f)
        h = keras.layers.LayerNormalization()(h + f)
    out = keras.layers.Dense(VOCAB)(h)
    return keras.Model(inp, out)


def run_loop(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(3e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, loss = [], None
    for ep in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = get_batch(ep * STEPS + s)
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return gaps, loss


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    seqs = make_progressions(rng, BATCH * N_BATCHES)
    batches = [(tf.constant(seqs[i * BATCH:(i + 1) * BATCH, :-1]), tf.constant(seqs[i * BATCH:(i + 1) * BATCH, 1:]))
               for i in range(N_BATCHES)]
    gaps, loss = run_loop(lambda k: batches[k % N_BATCHES])
    full = sec_per_step(gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[compute_transformer_tapeloop_chordprogression] full run: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, loss {loss:.4f}")
    if args.truth:
        gaps2, _ = run_loop(lambda k: batches[0])
        comp = sec_per_step(gaps2)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[compute_transformer_tapeloop_chordprogression] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
