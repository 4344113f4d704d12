"""Sleep-stage scoring (W/N1/N2/N3/REM) from 30-s polysomnography epochs, 4 EEG/EOG channels at 100 Hz.
Data path: the night recordings sit in memory as raw int16 ADC counts with per-channel gains; for every batch a Python
loop converts each epoch to microvolts, removes the DC offset, band-passes it into delta/theta/alpha/sigma/beta by
numpy rfft masking + irfft, takes a 0.5-s moving-RMS envelope per band, and the batch goes to model.train_on_batch."""
import argparse, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
FS = 100
EPOCH_S = 30
N_CH = 4
N_EPOCHS = 1500
BANDS = [(0.5, 4), (4, 8), (8, 12), (12, 15), (15, 30)]
ENV_WIN = 50
N_OUT = EPOCH_S * 2
BATCH = 32
STEPS = 150
N_STAGES = 5


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_recording(rng):
    n = FS * EPOCH_S
    t = np.arange(n) / FS
    stages = rng.integers(0, N_STAGES, N_EPOCHS)
    dominant = {0: 20.0, 1: 6.0, 2: 13.0, 3: 1.5, 4: 9.0}
    raw = np.empty((N_EPOCHS, N_CH, n), np.int16)
    for i, st in enumerate(stages):
        f0 = dominant[int(st)]
        for c in range(N_CH):
            sig = 40 * np.sin(2 * np.pi * (f0 + rng.normal(0, 0.3)) * t + rng.uniform(0, 6.28))
            sig += rng.normal(0, 15, n) + 5 * c
            raw[i, c] = np.clip(sig / 0.2 + 200, -32768, 32767).astype(np.int16)
    gains = np.array([0.2, 0.2, 0.2, 0.2], np.float32)
    return raw, gains, stages.astype(np.int32)


def epoch_features(x_counts, gains):
    n = x_counts.shape[-1]
    freqs = np.fft.rfftfreq(n, 1.0 / FS)
    win = np.ones(ENV_WIN) / ENV_WIN
    out = np.empty((N_OUT, N_CH * len(BANDS)), np.float32)
    for c in range(N_CH):
        uv = x_counts[c].astype(np.float64) * gains[c]
        uv -= uv.mean()
        spec = np.fft.rfft(uv)
        for b, (lo, hi) in enumerate(BANDS):
            band = np.fft.irfft(spec * ((freqs >= lo) & (freqs < hi)), n)
            env = np.sqrt(np.convolve(band * band, win, mode="same"))
            out[:, c * len(BANDS) + b] = np.log1p(env[ENV_WIN // 2::ENV_WIN][:N_OUT])
    return out


def batches(raw, gains, stages, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(raw), BATCH)
        x = np.stack([epoch_features(raw[i], gains) for i in idx])
        yield x, stages[idx]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_OUT, N_CH * len(BANDS)))
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = keras.layers.Bidirectional(keras.layers.GRU(64))(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(N_STAGES, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(source):
    model = build_model()
    stamps, loss = [], None
    for _, (x, y) in zip(range(STEPS), source):
        loss = float(model.train_on_batch(x, y)[0])
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_input_fftbands_trainonbatch_sleepeeg_")
    try:
        raw, gains, stages = make_recording(np.random.default_rng(SEED))
        full, loss = train(batches(raw, gains, stages, SEED))
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_fftbands_trainonbatch_sleepeeg: {1.0 / full:.2f} steps/s, final loss {loss:.4f}"
        if args.truth:
            x, y = next(batches(raw, gains, stages, SEED))
            comp, _ = train(iter(lambda: (x, y), None))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
