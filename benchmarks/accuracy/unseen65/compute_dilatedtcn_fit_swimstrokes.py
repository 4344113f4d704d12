"""Swim strokes: stroke-type classifier from wearable IMU windows, dilated TCN trained with model.fit.

Bottleneck (compute): data are pre-generated float32 arrays served from memory through
from_tensor_slices().cache().batch().prefetch(); the step time is dominated by a wide stack of
dilated residual Conv1D blocks over long windows.
"""
import time
_T0 = time.perf_counter()
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6507
N = 2048
WIN = 128
CH = 9
BATCH = 32
EPOCHS = 3
STEPS = 30


def make_data(rng):
    t = np.linspace(0, 8 * np.pi, WIN, dtype=np.float32)
    y = rng.integers(0, 5, N).astype(np.int32)
    freq = (1.0 + 0.3 * y)[:, None, None]
    x = np.sin(freq * t[None, :, None] + rng.uniform(0, 6.28, (N, 1, CH))).astype(np.float32)
    x += rng.normal(0, 0.3, x.shape).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((WIN, CH))
    x = keras.layers.Conv1D(48, 1)(inp)
    for d in (1, 2, 4, 8, 16, 32):
        h = keras.layers.Conv1D(48, 3, dilation_rate=d, padding="causal", activation="relu")(x)
        h = keras.layers.Conv1D(48, 3, dilation_rate=d, padding="causal")(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(5)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_data(np.random.default_rng(SEED))
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N, seed=SEED).repeat()
          .batch(BATCH).prefetch(tf.data.AUTOTUNE))

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[swimstrokes] dilated TCN fit: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[swimstrokes] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
