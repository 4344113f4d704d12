import time; T0 = time.perf_counter()
"""Violin-plate tap-tone regression with a hand-written GradientTape loop.

A luthier taps free top/back plates (spruce / maple) while graduating them and
records the ring. Each training batch is synthesised on the fly in Python/NumPy:
damped modal sinusoids (modes 1, 2, 5 and friends) plus room noise, framed with a
Hann window, FFT'd into a log-magnitude spectrogram. The network predicts the
plate's mean thickness (mm) and its mode-5 frequency (Hz, scaled).
"""
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


SR = 8000          # Hz, contact-mic recorder
N_SAMPLES = 2048   # ~0.26 s of ring
FRAME, HOP = 256, 128
N_MODES = 6
BATCH = 48
STEPS = 700
WINDOW = np.hanning(FRAME).astype(np.float32)
TIME_AXIS = np.arange(N_SAMPLES, dtype=np.float32) / SR


def synth_tap_batch(rng, batch):
    """Synthesise `batch` tap-tone recordings and their log spectrograms."""
    thickness = rng.uniform(2.4, 3.6, size=batch).astype(np.float32)        # mm
    density = rng.uniform(0.38, 0.48, size=batch).astype(np.float32)        # g/cm3 spruce
    stiffness = np.sqrt(thickness / density)
    base = 60.0 * stiffness                                                   # mode-1 Hz
    ratios = np.array([1.0, 1.55, 2.1, 2.9, 3.3, 4.1, 4.9, 5.6, 6.4, 7.3, 8.1, 9.0],
                      dtype=np.float32)[:N_MODES]
    freqs = base[:, None] * ratios[None, :] * rng.uniform(0.97, 1.03, size=(batch, N_MODES))
    damp = rng.uniform(8.0, 30.0, size=(batch, N_MODES))
    amp = rng.uniform(0.2, 1.0, size=(batch, N_MODES)) / (1.0 + np.arange(N_MODES))
    phase = rng.uniform(0, 2 * np.pi, size=(batch, N_MODES))
    t = TIME_AXIS[None, None, :]
    ring = (amp[..., None] * np.exp(-damp[..., None] * t)
            * np.sin(2 * np.pi * freqs[..., None] * t + phase[..., None])).sum(axis=1)
    ring += 0.01 * rng.standard_normal(ring.shape)
    ring /= np.abs(ring).max(axis=1, keepdims=True) + 1e-6
    n_frames = 1 + (N_SAMPLES - FRAME) // HOP
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n_frames)[:, None]
    frames = ring[:, idx] * WINDOW                       # (batch, frames, FRAME)
    spec = np.log1p(np.abs(np.fft.rfft(frames, axis=-1))).astype(np.float32)
    spec = (spec - spec.mean(axis=(1, 2), keepdims=True)) / (spec.std(axis=(1, 2), keepdims=True) + 1e-6)
    mode5 = freqs[:, 2] / 300.0
    target = np.stack([thickness - 3.0, mode5], axis=1).astype(np.float32)
    return spec, target


def build_model(input_shape):
    inp = keras.Input(shape=input_shape)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(2)(x)
    return keras.Model(inp, out)


def train(batch_source):
    """batch_source(step) -> (x, y); returns seconds/step and final loss."""
    keras.utils.set_random_seed(7)
    x0, _ = batch_source(0)
    model = build_model(x0.shape[1:])
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss_value = float("nan")
    for step in range(STEPS):
        x, y = batch_source(step)
        loss_value = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss_value


def main():
    rng = np.random.default_rng(20261207)
    sec, loss = train(lambda step: synth_tap_batch(rng, BATCH))
    emit({"steps_per_second": 1.0 / sec})
    summary = f"violinplates tapeloop: {STEPS} steps, {sec*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        fixed = synth_tap_batch(np.random.default_rng(99), BATCH)
        csec, _ = train(lambda step: fixed)
        frac = min(max((sec - csec) / sec, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(summary + f", total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
