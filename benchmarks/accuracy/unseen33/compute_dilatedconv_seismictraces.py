"""Earthquake vs. quarry-blast discrimination from single-station seismograms.

A WaveNet-style stack of gated, dilated causal Conv1D blocks with residual and
skip connections, trained with model.fit on traces already in memory
(from_tensor_slices -> shuffle -> batch -> prefetch).
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TRACES = 2048
TRACE_LEN = 512
BATCH = 16
STEPS = 100
EPOCHS = 2
FILTERS = 32
DILATIONS = (1, 2, 4, 8, 16, 32, 64, 128)


class StepClock(keras.callbacks.Callback):
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


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def synth_traces(rng):
    t = np.arange(TRACE_LEN) / 100.0
    y = rng.integers(0, 2, N_TRACES)
    onset = rng.integers(50, 250, N_TRACES)
    x = rng.normal(scale=0.2, size=(N_TRACES, TRACE_LEN)).astype(np.float32)
    for i in range(N_TRACES):
        tt = np.clip(t - onset[i] / 100.0, 0, None)
        freq = 2.0 if y[i] == 0 else 6.0
        decay = 0.4 if y[i] == 0 else 1.5
        x[i] += (np.exp(-decay * tt) * np.sin(2 * np.pi * freq * tt) * (tt > 0)).astype(np.float32)
    return x[..., None], y.astype(np.int32)


def wavenet(shape):
    inputs = keras.Input(shape)
    h = keras.layers.Conv1D(FILTERS, 1)(inputs)
    skips = []
    for d in DILATIONS:
        f = keras.layers.Conv1D(FILTERS, 3, dilation_rate=d, padding="causal", activation="tanh")(h)
        g = keras.layers.Conv1D(FILTERS, 3, dilation_rate=d, padding="causal", activation="sigmoid")(h)
        z = keras.layers.Multiply()([f, g])
        skips.append(keras.layers.Conv1D(FILTERS, 1)(z))
        h = keras.layers.Add()([h, keras.layers.Conv1D(FILTERS, 1)(z)])
    s = keras.layers.Activation("relu")(keras.layers.Add()(skips))
    s = keras.layers.Conv1D(FILTERS, 1, activation="relu")(s)
    s = keras.layers.GlobalAveragePooling1D()(s)
    model = keras.Model(inputs, keras.layers.Dense(2)(s))
    model.compile(optimizer=keras.optimizers.Adam(5e-4),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds, clock):
    keras.utils.set_random_seed(6)
    model = wavenet((TRACE_LEN, 1))
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = synth_traces(np.random.default_rng(0))
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRACES, seed=0)
          .batch(BATCH, drop_remainder=True).repeat().prefetch(2))
    clock = StepClock()
    hist, wall = train(ds, clock)
    full = clock.seconds_per_step()
    report(steps_per_second=1.0 / full)
    msg = f"seismictraces: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, acc {hist.history['accuracy'][-1]:.3f}"
    if args.truth:
        batch = (x[:BATCH], y[:BATCH])
        clock2 = StepClock()
        train(tf.data.Dataset.from_tensors(batch).repeat(), clock2)
        compute = clock2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
