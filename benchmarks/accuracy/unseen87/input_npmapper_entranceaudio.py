import time; T0 = time.perf_counter()
import json
import os
import sys
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


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps never cross epochs."""

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

# Hive-entrance acoustics: 1-second microphone clips at 8 kHz labelled
# queenright hum / queenless roar / queen piping.  tf.data maps a clip index
# through tf.numpy_function (serial map, no parallel calls): the function
# synthesises the clip and computes a 40-band log-mel spectrogram frame by
# frame in Python.  model.fit trains a Conv1D classifier on the spectrograms.

SR = 8000
CLIP = 8000
NFFT = 256
HOP = 128
BANDS = 40
N_FRAMES = 1 + (CLIP - NFFT) // HOP
BATCH = 32
STEPS = 80
EPOCHS = 2
CLASSES = 3
FILTERS = 288


def mel_bank():
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)
    mels = np.linspace(hz_to_mel(50.0), hz_to_mel(SR / 2), BANDS + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = np.floor((NFFT + 1) * hz / SR).astype(int)
    bank = np.zeros((NFFT // 2 + 1, BANDS), np.float32)
    for b in range(BANDS):
        lo, mid, hi = bins[b], bins[b + 1], bins[b + 2]
        for k in range(lo, mid):
            bank[k, b] = (k - lo) / max(mid - lo, 1)
        for k in range(mid, hi):
            bank[k, b] = (hi - k) / max(hi - mid, 1)
    return bank


MEL = mel_bank()
WINDOW = np.hanning(NFFT).astype(np.float32)
T = np.arange(CLIP) / SR


def clip_features(index):
    rng = np.random.default_rng(int(index) + 870000)
    label = int(rng.integers(CLASSES))
    f0 = {0: 230.0, 1: 290.0, 2: 240.0}[label] + rng.normal(0.0, 12.0)
    sig = np.zeros(CLIP)
    for h in range(1, 7):
        sig += (0.6 ** h) * np.sin(2 * np.pi * f0 * h * T + rng.uniform(0, 6.28))
    if label == 1:  # queenless colonies: louder, rougher roar
        sig *= 1.0 + 0.4 * np.sin(2 * np.pi * rng.uniform(3, 9) * T)
    if label == 2:  # tooting: 1 s pulses around 400-500 Hz
        sig += 0.8 * np.sin(2 * np.pi * rng.uniform(400, 500) * T) * (T % 0.25 < 0.2)
    sig += rng.normal(0.0, 0.3, CLIP)  # wind and traffic at the entrance
    spec = np.empty((N_FRAMES, BANDS), np.float32)
    for i in range(N_FRAMES):
        frame = sig[i * HOP:i * HOP + NFFT] * WINDOW
        power = np.abs(np.fft.rfft(frame)) ** 2
        spec[i] = np.log(power @ MEL + 1e-6)
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return spec.astype(np.float32), np.int32(label)


def make_dataset(start):
    def load(i):
        spec, label = tf.numpy_function(clip_features, [i], (tf.float32, tf.int32))
        spec.set_shape((N_FRAMES, BANDS))
        label.set_shape(())
        return spec, label
    return tf.data.Dataset.range(start, start + 10 ** 7).map(load).batch(BATCH)


def build_model():
    model = keras.Sequential([
        keras.Input((N_FRAMES, BANDS)),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(FILTERS, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(CLASSES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


keras.utils.set_random_seed(87)
timer = StepTimer()
model = build_model()
model.fit(make_dataset(0), steps_per_epoch=STEPS, epochs=EPOCHS,
          callbacks=[timer], verbose=0)
full = seconds_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
print(f"[entranceaudio] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    xb, yb = next(iter(make_dataset(5 * 10 ** 7)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    model2 = build_model()
    model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[entranceaudio] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
