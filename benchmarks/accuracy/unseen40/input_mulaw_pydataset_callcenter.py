"""Call-centre intent spotting: telephony recordings arrive as headerless 8 kHz
G.711 mu-law byte files (.ul), one per utterance. A keras.utils.PyDataset reads the
raw bytes, expands mu-law to linear PCM, applies pre-emphasis, a random time shift and
line noise, frames the signal and computes log-mel features in numpy for model.fit.
"""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
SR = 8000
CLIP = SR  # 1 s
N_FILES = 2560
N_CLASSES = 6
BATCH = 32
STEPS = 80
EPOCHS = 8
FRAME, HOP, NFFT, NMEL = 200, 80, 256, 40
MU = 255.0


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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def mulaw_encode(x):
    y = np.sign(x) * np.log1p(MU * np.abs(x)) / np.log1p(MU)
    return np.round((y + 1) / 2 * MU).astype(np.uint8)


def mulaw_decode(b):
    y = b.astype(np.float32) / MU * 2 - 1
    return np.sign(y) * (np.power(1 + MU, np.abs(y)) - 1) / MU


def write_recordings(root):
    rng = np.random.default_rng(SEED)
    t = np.arange(CLIP) / SR
    paths, labels = [], []
    for i in range(N_FILES):
        label = int(rng.integers(0, N_CLASSES))
        f0 = 300 + 180 * label + rng.uniform(-30, 30)
        env = np.exp(-((t - rng.uniform(0.3, 0.7)) ** 2) / 0.03)
        sig = env * (0.5 * np.sin(2 * np.pi * f0 * t) + 0.3 * np.sin(2 * np.pi * 2.1 * f0 * t))
        sig += 0.05 * rng.normal(size=CLIP)
        p = os.path.join(root, f"utt_{i:04d}.ul")
        with open(p, "wb") as f:
            f.write(mulaw_encode(np.clip(sig, -1, 1)).tobytes())
        paths.append(p)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


def mel_filterbank():
    def hz2mel(h):
        return 2595 * np.log10(1 + h / 700.0)

    def mel2hz(m):
        return 700 * (10 ** (m / 2595.0) - 1)

    pts = mel2hz(np.linspace(hz2mel(60), hz2mel(SR / 2), NMEL + 2))
    bins = np.floor((NFFT + 1) * pts / SR).astype(int)
    fb = np.zeros((NMEL, NFFT // 2 + 1), dtype=np.float32)
    for m in range(1, NMEL + 1):
        l, c, r = bins[m - 1], bins[m], bins[m + 1]
        for k in range(l, c):
            fb[m - 1, k] = (k - l) / max(c - l, 1)
        for k in range(c, r):
            fb[m - 1, k] = (r - k) / max(r - c, 1)
    return fb


N_FRAMES = 1 + (CLIP - FRAME) // HOP


class MulawUtterances(keras.utils.PyDataset):
    def __init__(self, paths, labels, seed, **kw):
        super().__init__(**kw)
        self.paths, self.labels = paths, labels
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(len(paths))
        self.fb = mel_filterbank()
        self.window = np.hamming(FRAME).astype(np.float32)

    def __len__(self):
        return len(self.paths) // BATCH

    def features(self, path):
        with open(path, "rb") as f:
            pcm = mulaw_decode(np.frombuffer(f.read(), dtype=np.uint8))
        pcm = np.roll(pcm, int(self.rng.integers(-800, 800)))
        pcm = pcm + 0.01 * self.rng.normal(size=pcm.shape).astype(np.float32)
        pcm = np.append(pcm[0], pcm[1:] - 0.97 * pcm[:-1])
        frames = np.stack([pcm[s:s + FRAME] * self.window for s in range(0, CLIP - FRAME + 1, HOP)])
        power = np.abs(np.fft.rfft(frames, n=NFFT)) ** 2 / NFFT
        logmel = np.log(power @ self.fb.T + 1e-6)
        return ((logmel - logmel.mean(0)) / (logmel.std(0) + 1e-5)).astype(np.float32)

    def __getitem__(self, idx):
        sel = self.order[idx * BATCH:(idx + 1) * BATCH]
        x = np.stack([self.features(self.paths[i]) for i in sel])
        return x, self.labels[sel]

    def on_epoch_end(self):
        self.order = self.rng.permutation(len(self.paths))


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_FRAMES, NMEL))
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(data, timer, steps):
    model = build_model()
    return model.fit(data, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer], verbose=0).history


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_input_mulaw_pydataset_callcenter_")
    try:
        paths, labels = write_recordings(tmp)
        ds = MulawUtterances(paths, labels, SEED)
        steps = min(STEPS, len(ds))
        timer = StepTimer()
        hist = train(ds, timer, steps)
        full = timer.seconds_per_step()
        append_out({"steps_per_second": 1.0 / full})
        msg = f"mulaw callcenter: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
        if truth:
            xb, yb = MulawUtterances(paths, labels, SEED + 1)[0]
            ctimer = StepTimer()
            train(tf.data.Dataset.from_tensors((xb, yb)).repeat(), ctimer, steps)
            comp = ctimer.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
