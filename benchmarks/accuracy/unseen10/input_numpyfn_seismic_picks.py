"""Earthquake detection on synthetic three-component seismograms.

A 1-D ConvNet classifies 30 s windows (100 Hz, three components) as "event" or
"noise". The windows are synthesised per example inside a ``tf.data`` pipeline: a
serial ``map`` calls ``tf.numpy_function`` to draw coloured noise, add P and S
arrivals, band-pass filter the trace with an FFT and append an STA/LTA
characteristic function of the Hilbert envelope as a fourth channel. The pipeline is batched and handed to
``model.fit`` without any prefetch or parallel calls.

Run ``python input_numpyfn_seismic_picks.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

RATE = 100
SAMPLES = 30 * RATE
BATCH = 32
STEPS = 260


def wavelet(rng, length, freq):
    t = np.arange(length) / RATE
    return np.exp(-t * rng.uniform(1.5, 4.0)) * np.sin(2 * np.pi * freq * t)


def sta_lta(x, short=50, long=500):
    energy = np.cumsum(x**2)
    sta = (energy[short:] - energy[:-short]) / short
    lta = (energy[long:] - energy[:-long]) / long
    ratio = np.zeros_like(x)
    ratio[long:] = sta[long - short :] / (lta + 1e-6)
    return ratio


def hilbert_mask():
    h = np.zeros(SAMPLES)
    h[0] = h[SAMPLES // 2] = 1
    h[1 : SAMPLES // 2] = 2
    return h


def make_window(index):
    """Synthesises one labelled three-component window (runs in numpy)."""
    rng = np.random.default_rng(int(index))
    label = rng.integers(0, 2)
    noise = rng.normal(size=(3, SAMPLES))
    trace = np.cumsum(noise, axis=1) * 0.02 + noise
    if label:
        p_time = rng.integers(500, 1800)
        s_time = p_time + rng.integers(150, 900)
        amp = rng.uniform(2, 15)
        for comp in range(3):
            p_len = SAMPLES - p_time
            trace[comp, p_time:] += amp * 0.4 * wavelet(rng, p_len, rng.uniform(4, 12))
            s_len = SAMPLES - s_time
            trace[comp, s_time:] += amp * wavelet(rng, s_len, rng.uniform(1, 5))
    spectrum = np.fft.rfft(trace, axis=1)
    freqs = np.fft.rfftfreq(SAMPLES, 1 / RATE)
    spectrum[:, (freqs < 1.0) | (freqs > 20.0)] = 0
    trace = np.fft.irfft(spectrum, n=SAMPLES, axis=1)
    trace /= np.abs(trace).max() + 1e-6
    analytic = np.fft.ifft(np.fft.fft(trace, axis=1) * hilbert_mask(), axis=1)
    envelope = np.abs(analytic).sum(axis=0)
    cf = sta_lta(envelope)
    features = np.concatenate([trace, cf[None, :] / (cf.max() + 1e-6)], axis=0)
    return features.T.astype(np.float32), np.float32(label)


def parse(index):
    x, y = tf.numpy_function(make_window, [index], [tf.float32, tf.float32])
    x.set_shape((SAMPLES, 4))
    y.set_shape(())
    return x, y


def make_dataset():
    ds = tf.data.Dataset.range(1_000_000).shuffle(10_000, seed=7)
    return ds.map(parse).batch(BATCH).repeat()


def build_model():
    inputs = keras.Input((SAMPLES, 4))
    x = inputs
    for filters in (24, 32, 64, 64):
        x = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(4)(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=["accuracy", keras.metrics.AUC(name="auc")],
    )
    return model


class BatchTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def fit_and_time(dataset):
    model = build_model()
    times = BatchTimes()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[times], verbose=0)
    s = times.stamps
    return (s[-1] - s[4]) / (len(s) - 5)


def write_out(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    full = fit_and_time(make_dataset())
    write_out("steps_per_second", 1 / full)
    msg = f"seismic detector: {1 / full:.2f} steps/s"
    if args.truth:
        one_batch = next(iter(make_dataset()))
        compute = fit_and_time(tf.data.Dataset.from_tensors(one_batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out("truth_input_fraction", frac)
        msg += f" | full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, input {frac:.2f}"
    print(msg)
