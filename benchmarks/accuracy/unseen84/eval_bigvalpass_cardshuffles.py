import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

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


# Card-game shuffles: a casino's automatic shuffler logs the deck order after
# each shuffle cycle; a model estimates how many riffle passes the deck got
# (1-10), from the card sitting at each of the 52 positions.  Riffles are
# simulated with the Gilbert-Shannon-Reeds model.  After every epoch a
# callback scores the whole held-out shoe log with model.predict and reports
# the exact-pass accuracy.
DECK = 52
MAX_PASSES = 10
N_TRAIN = 30000
N_HOLDOUT = 260000
BATCH = 256
STEPS = 60
EPOCHS = 3


def gsr_decks(rng, n):
    passes = rng.integers(1, MAX_PASSES + 1, n)
    keys = rng.integers(0, 2 ** 20, (n, DECK)) % (2 ** passes)[:, None]
    decks = np.argsort(keys, axis=1, kind="stable").astype(np.int32)
    return decks, (passes - 1).astype(np.int32)


class HoldoutScore(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x, batch_size=2048, verbose=0)
        acc = float(np.mean(np.argmax(probs, axis=1) == self.y))
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: holdout pass accuracy {acc:.3f}")


def make_model():
    inp = keras.Input((DECK,), dtype="int32")
    x = keras.layers.Embedding(DECK, 24)(inp)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(MAX_PASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds, holdout):
    keras.utils.set_random_seed(73)
    model = make_model()
    timer = StepTimer()
    scorer = HoldoutScore(*holdout)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, scorer], verbose=0)
    return timer.seconds_per_step(), scorer.seconds


def main():
    rng = np.random.default_rng(79)
    x, y = gsr_decks(rng, N_TRAIN)
    holdout = gsr_decks(rng, N_HOLDOUT)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=4).batch(BATCH).repeat().prefetch(2)
    full, eval_s = run(ds, holdout)
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"cardshuffles: {full * 1000:.1f} ms/step, evaluation {eval_s:.1f} s of wall {wall:.1f} s "
          f"= {100 * eval_s / wall:.1f}% of wall")
    if TRUTH:
        one = next(iter(ds))
        compute, eval_s2 = run(tf.data.Dataset.from_tensors(one).repeat(), holdout)
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"cardshuffles truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
              f"evaluation {eval_s + eval_s2:.1f} s of wall {wall:.1f} s = {100 * (eval_s + eval_s2) / wall:.1f}%")


if __name__ == "__main__":
    main()
