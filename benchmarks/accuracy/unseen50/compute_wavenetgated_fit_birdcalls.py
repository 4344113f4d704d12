"""Bird-call species tagging from raw 8 kHz waveform snippets (5 species).
Snippets are synthesised into an in-memory numpy array (chirps, trills and harmonics plus
wind noise) and passed straight to model.fit as arrays. The model is a WaveNet-style stack of
dilated causal convolutions with gated tanh/sigmoid activations, residual and skip connections.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N = 1536
LEN = 512
FILTERS = 32
DILATIONS = [1, 2, 4, 8, 16, 32, 64, 128]
BATCH = 32
EPOCHS = 2


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_data(rng):
    t = np.arange(LEN) / 8000.0
    y = rng.integers(0, 5, N).astype(np.int32)
    f0 = 600 + 250 * y[:, None] + rng.normal(0, 30, (N, 1))
    sweep = (y[:, None] % 2) * 900 * t[None, :]
    trill = 1 + 0.6 * np.sin(2 * np.pi * (8 + 4 * y[:, None]) * t[None, :])
    x = np.sin(2 * np.pi * (f0 + sweep) * t[None, :]) * trill
    x += 0.3 * np.sin(4 * np.pi * (f0 + sweep) * t[None, :])
    x += 0.4 * rng.standard_normal((N, LEN))
    return x[..., None].astype(np.float32), y


def make_model():
    inp = keras.Input((LEN, 1))
    x = keras.layers.Conv1D(FILTERS, 2, padding="causal")(inp)
    skips = []
    for d in DILATIONS:
        f = keras.layers.Conv1D(FILTERS, 2, dilation_rate=d, padding="causal", activation="tanh")(x)
        g = keras.layers.Conv1D(FILTERS, 2, dilation_rate=d, padding="causal", activation="sigmoid")(x)
        z = keras.layers.Multiply()([f, g])
        skips.append(keras.layers.Conv1D(FILTERS, 1)(z))
        x = keras.layers.Add()([x, keras.layers.Conv1D(FILTERS, 1)(z)])
    s = keras.layers.Activation("relu")(keras.layers.Add()(skips))
    s = keras.layers.Conv1D(FILTERS, 1, activation="relu")(s)
    s = keras.layers.GlobalAveragePooling1D()(s)
    out = keras.layers.Dense(5)(s)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_compute_wavenetgated_fit_birdcalls_")
    try:
        x, y = make_data(np.random.default_rng(SEED))
        steps = int(np.ceil(N / BATCH))
        model = make_model()
        timer = StepTimer()
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f}"
        if truth:
            one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            timer2 = StepTimer()
            make_model().fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"compute_wavenetgated_fit_birdcalls: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
