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
# Music mood tagging with a convolutional-recurrent network (CRNN) on log-mel
# spectrogram patches that are generated once and held in memory. The input
# pipeline is from_tensor_slices -> cache -> repeat -> batch -> prefetch, so
# model.fit is bound by the Conv2D + GRU forward/backward pass.
# ---------------------------------------------------------------------------
SEED = 60
N_CLIPS = 512
T_FRAMES = 64
N_MELS = 48
N_MOODS = 10
BATCH = 32
STEPS = 20
EPOCHS = 2


def make_data():
    rng = np.random.default_rng(SEED)
    y = rng.integers(0, N_MOODS, N_CLIPS)
    t = np.arange(T_FRAMES)[:, None]
    m = np.arange(N_MELS)[None, :]
    x = np.empty((N_CLIPS, T_FRAMES, N_MELS, 1), np.float32)
    for i in range(N_CLIPS):
        tempo = 2 + y[i] * 0.4
        x[i, :, :, 0] = np.sin(t / tempo) * np.exp(-((m - 4 * y[i]) ** 2) / 60.0) + \
            rng.normal(0, 0.3, (T_FRAMES, N_MELS))
    return x, (np.eye(N_MOODS, dtype=np.float32)[y] + (rng.random((N_CLIPS, N_MOODS)) < 0.1)).clip(0, 1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((T_FRAMES, N_MELS, 1))
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D((1, 2))(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D((2, 2))(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D((2, 2))(h)
    h = keras.layers.Reshape((T_FRAMES // 4, (N_MELS // 8) * 48))(h)
    h = keras.layers.GRU(64, return_sequences=True)(h)
    h = keras.layers.GRU(64)(h)
    out = keras.layers.Dense(N_MOODS, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    args = parse_args()
    x, y = make_data()
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(N_CLIPS, seed=SEED)
          .repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[compute_crnn_fit_moodtagging] full run: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s")
    if args.truth:
        one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = sec_per_step(timer2.gaps)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[compute_crnn_fit_moodtagging] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
