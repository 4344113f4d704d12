import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Wind-turbine vibration sensors: windows cut by keras.utils.timeseries_dataset_from_array
# from one long multichannel recording, then a heavy multi-resolution STFT map per batch.
BATCH, SEQ, CH, STEPS, EPOCHS = 64, 256, 12, 150, 3


def make_data(rng):
    n = 120_000
    t = np.arange(n, dtype=np.float32)[:, None]
    freqs = rng.uniform(0.01, 0.2, size=(1, CH)).astype(np.float32)
    sig = np.sin(t * freqs) + 0.3 * rng.standard_normal((n, CH)).astype(np.float32)
    fault = (np.convolve(np.abs(sig[:, 0]), np.ones(50) / 50, mode="same") > 0.75).astype(np.float32)
    return sig.astype(np.float32), fault


def spectral_features(x, y):
    # x: (B, SEQ, CH) -> per-channel log spectrogram at three resolutions
    xt = tf.transpose(x, [0, 2, 1])
    feats = []
    for fl, fs in ((16, 4), (32, 8), (64, 8)):
        s = tf.abs(tf.signal.stft(xt, frame_length=fl, frame_step=fs, fft_length=fl))
        s = tf.math.log1p(s)
        s = (s - tf.reduce_mean(s, axis=[2, 3], keepdims=True)) / (tf.math.reduce_std(s, axis=[2, 3], keepdims=True) + 1e-6)
        feats.append(tf.reduce_mean(s, axis=2))
        feats.append(tf.reduce_max(s, axis=2))
    return tf.concat(feats, axis=-1), y


def build_model(dim):
    inp = keras.Input((CH, dim))
    h = keras.layers.Flatten()(inp)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    sig, fault = make_data(rng)
    ds = keras.utils.timeseries_dataset_from_array(
        sig, fault[SEQ - 1:], sequence_length=SEQ, sequence_stride=3,
        batch_size=BATCH, shuffle=True, seed=1)
    ds = ds.map(spectral_features).repeat().prefetch(2)
    dim = int(ds.element_spec[0].shape[-1])
    t0 = time.perf_counter()
    timer = StepTimer()
    build_model(dim).fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        timer2 = StepTimer()
        build_model(dim).fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                             epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"input_timeseries_stft_turbines: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
