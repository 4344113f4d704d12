"""Medieval manuscript line transcription (compute-bound, custom GradientTape loop).

Data path: synthetic line-image feature sequences and character targets are
generated once with numpy, converted to tensors and pre-sliced into a list
of batches before training; the Python loop only indexes that list.  Model: a stack of Transformer
encoder blocks (multi-head self-attention + MLP) with per-position
character logits, trained with a tf.function GradientTape step.
Deliberate bottleneck: attention/MLP math (compute-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


BATCH = 24
STEPS = 20
EPOCHS = 3
SEQ = 64
FEAT = 48
DM = 64
NCHAR = 40
BLOCKS = 2


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, NCHAR, (n, SEQ)).astype(np.int32)
    proj = rng.normal(0, 1, (NCHAR, FEAT))
    x = proj[y] + rng.normal(0, 0.8, (n, SEQ, FEAT))
    return tf.constant(x.astype(np.float32)), tf.constant(y)


X, Y = make_data(512, seed=76)


def encoder_block(x):
    a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=DM // 4)(x, x)
    x = keras.layers.LayerNormalization()(x + a)
    f = keras.layers.Dense(DM * 4, activation="gelu")(x)
    f = keras.layers.Dense(DM)(f)
    return keras.layers.LayerNormalization()(x + f)


def build_model():
    inp = keras.Input((SEQ, FEAT))
    x = keras.layers.Dense(DM)(inp)
    for _ in range(BLOCKS):
        x = encoder_block(x)
    out = keras.layers.Dense(NCHAR)(x)
    return keras.Model(inp, out)


def run(batch_fn):
    keras.utils.set_random_seed(76)
    model = build_model()
    opt = keras.optimizers.Adam(5e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            x, y = batch_fn(step)
            loss = float(train_step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return mean_after_warmup(gaps), loss


# batches are pre-sliced tensors; the loop only indexes a Python list
BATCHES = [(X[i:i + BATCH], Y[i:i + BATCH]) for i in range(0, X.shape[0] - BATCH + 1, BATCH)]


def sliced(step):
    return BATCHES[step % len(BATCHES)]


def main():
    full, loss = run(sliced)
    emit({"steps_per_second": 1.0 / full})
    print(f"manuscriptlines: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        batch = sliced(0)
        compute, _ = run(lambda step: batch)
        report_truth(full, compute)


if __name__ == "__main__":
    main()
