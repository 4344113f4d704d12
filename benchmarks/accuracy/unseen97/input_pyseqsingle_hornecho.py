import time; T0 = time.perf_counter()
import os
import sys
import json
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


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

# Fog-horn acoustic traces: a hydrophone/microphone on the headland records each
# diaphone blast.  A keras.utils.PyDataset (workers=1) synthesises the blast audio
# for a batch and turns it into a log-power spectrogram with a NumPy STFT in
# __getitem__; model.fit consumes it.  Label: horn condition (healthy, reed wear,
# air leak, compressor surge, diaphragm crack).

BATCH = 48
EPOCHS = 3
BATCHES_PER_EPOCH = 130
SR = 4000
CLIP = 8192
NFFT = 256
HOP = 128
FRAMES = 1 + (CLIP - NFFT) // HOP
BINS = NFFT // 2 + 1
N_CLASS = 5


def synth_blast(rng, cls):
    t = np.arange(CLIP) / SR
    f0 = rng.uniform(140, 190)
    env = np.clip(t / 0.15, 0, 1) * np.clip((CLIP / SR - t) / 0.3, 0, 1)
    wave = np.zeros(CLIP)
    for h in range(1, 6):
        amp = 1.0 / h
        if cls == 1 and h > 4:
            amp *= 0.2  # reed wear: weak upper harmonics
        wave += amp * np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6.28))
    if cls == 2:
        wave += 0.4 * rng.normal(0, 1, CLIP)  # air leak hiss
    if cls == 3:
        wave *= 1 + 0.5 * np.sin(2 * np.pi * 3.0 * t)  # surge
    if cls == 4:
        wave += 0.6 * np.sign(np.sin(2 * np.pi * f0 * 2.01 * t))  # cracked diaphragm buzz
    return env * wave + rng.normal(0, 0.05, CLIP)


def spectrogram(x):
    win = np.hanning(NFFT)
    frames = np.stack([x[i * HOP: i * HOP + NFFT] * win for i in range(FRAMES)])
    p = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    p = np.log10(p + 1e-6)
    return ((p - p.mean()) / (p.std() + 1e-6)).astype(np.float32)


class HornTraceSequence(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__(workers=1, use_multiprocessing=False)
        self.seed = seed

    def __len__(self):
        return BATCHES_PER_EPOCH

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        xs = np.empty((BATCH, FRAMES, BINS), np.float32)
        ys = np.empty((BATCH,), np.int32)
        for i in range(BATCH):
            c = int(rng.integers(N_CLASS))
            xs[i] = spectrogram(synth_blast(rng, c))
            ys[i] = c
        return xs, ys


def build_model():
    keras.utils.set_random_seed(2)
    inp = keras.Input((FRAMES, BINS))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(data, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(HornTraceSequence(seed=7))
emit({"steps_per_second": 1.0 / full})
print(f"[hornecho] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = HornTraceSequence(seed=7)[0]
    one = tf.data.Dataset.from_tensors((tf.constant(xb), tf.constant(yb))).repeat()
    compute = train(one, steps=BATCHES_PER_EPOCH)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[hornecho] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
