"""Finding-code tagging of radiology report impressions.

Report impressions are already tokenised to integer ids and held in numpy
arrays in memory; model.fit trains an FNet encoder (Fourier-transform token
mixing instead of attention, via tf.signal.fft2d, plus wide feed-forward
blocks) so the step time is the model math.
"""
import json
import os
import sys
import shutil
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

VOCAB = 4000
SEQ = 64
DIM = 96
BLOCKS = 4
N = 4096
BATCH = 32
STEPS = 100
EPOCHS = 3
N_CODES = 12


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


class FourierMixing(layers.Layer):
    def call(self, x):
        z = tf.signal.fft2d(tf.complex(x, tf.zeros_like(x)))
        return tf.math.real(z)


def build_model():
    keras.utils.set_random_seed(12)
    inp = keras.Input((SEQ,), dtype="int32")
    x = layers.Embedding(VOCAB, DIM)(inp)
    for _ in range(BLOCKS):
        x = layers.LayerNormalization()(x + FourierMixing()(x))
        h = layers.Dense(DIM * 4, activation="gelu")(x)
        x = layers.LayerNormalization()(x + layers.Dense(DIM)(h))
    x = layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, layers.Dense(N_CODES)(x))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_compute_fnet_fit_radiologyreports_")
    try:
        rng = np.random.default_rng(43)
        y = rng.integers(0, N_CODES, N).astype(np.int32)
        x = rng.zipf(1.3, (N, SEQ)) % VOCAB
        x[:, :8] = (y[:, None] * 37 + np.arange(8)) % VOCAB
        x = x.astype(np.int32)

        model = build_model()
        timer = StepTimer()
        hist = model.fit(x, y, batch_size=BATCH, steps_per_epoch=STEPS, epochs=EPOCHS,
                         callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"radiology FNet: {1.0 / full:.2f} steps/s, loss {hist.history['loss'][-1]:.3f}"
        if truth:
            batch = (x[:BATCH], y[:BATCH])
            model = build_model()
            t2 = StepTimer()
            model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                      epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
