"""Snowpack depth probes: a keras.utils.PyDataset (workers=1) simulates
penetrometer resistance profiles and runs a per-profile Python layer detector
(weak-layer / crust detection) before model.fit sees the batch."""
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


DEPTH_BINS = 160          # 1 cm bins down a 160 cm snowpack
CHANNELS = 4              # resistance, gradient, layer flag, hardness class
BATCH = 128
STEPS = 130
EPOCHS = 4


def detect_layers(res):
    """Walk the profile top-down and mark layer boundaries (Python loop, as in
    the field-team notebook this was ported from)."""
    flags = [0.0] * len(res)
    hardness = [0.0] * len(res)
    grad = [0.0] * len(res)
    run_mean = res[0]
    weak = 0
    for i in range(1, len(res)):
        d = res[i] - res[i - 1]
        grad[i] = d
        run_mean = 0.9 * run_mean + 0.1 * res[i]
        if abs(d) > 0.35 * (run_mean + 1e-3):
            flags[i] = 1.0
        r = res[i]
        if r < 0.5:
            hardness[i] = 0.0          # fist
        elif r < 1.5:
            hardness[i] = 0.25         # four finger
        elif r < 3.0:
            hardness[i] = 0.5          # one finger
        elif r < 6.0:
            hardness[i] = 0.75         # pencil
        else:
            hardness[i] = 1.0          # knife / ice
        if i > 2 and res[i] < 0.4 * res[i - 2] and res[i - 2] > 2.0:
            weak += 1
    # second pass: settle-corrected resistance (temperature-gradient proxy)
    settle = 0.0
    for i in range(len(res) - 1, 0, -1):
        settle = 0.97 * settle + 0.03 * (res[i] - res[i - 1]) ** 2
        if settle > 0.5 and flags[i] > 0.0:
            hardness[i] = 0.5 * (hardness[i] + min(settle, 1.0))
    # third pass: load carried by the overlying 6 cm (ram-resistance integral)
    for i in range(len(res)):
        load = 0.0
        for j in range(max(0, i - 6), i):
            load += res[j]
        if load > 12.0 and hardness[i] < 0.3:
            weak += 1
    return grad, flags, hardness, weak


class SnowpackProbes(keras.utils.PyDataset):
    def __init__(self, n_batches, seed):
        super().__init__(workers=1, use_multiprocessing=False, max_queue_size=4)
        self.n_batches = n_batches
        self.seed = seed

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        x = np.zeros((BATCH, DEPTH_BINS, CHANNELS), np.float32)
        y = np.zeros((BATCH,), np.float32)
        for b in range(BATCH):
            n_layers = int(rng.integers(3, 9))
            cuts = np.sort(rng.integers(5, DEPTH_BINS - 5, n_layers))
            levels = rng.gamma(2.0, 1.5, n_layers + 1)
            prof = np.repeat(levels, np.diff(np.concatenate([[0], cuts, [DEPTH_BINS]])))
            prof = prof + np.linspace(0.0, 2.0, DEPTH_BINS) + rng.normal(0, 0.15, DEPTH_BINS)
            res = np.clip(prof, 0.05, None).tolist()
            grad, flags, hardness, weak = detect_layers(res)
            x[b, :, 0] = res
            x[b, :, 1] = grad
            x[b, :, 2] = flags
            x[b, :, 3] = hardness
            y[b] = 1.0 if weak >= 2 else 0.0
        x[:, :, 0] /= 8.0
        return x, y


class StepTimer(keras.callbacks.Callback):
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


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((DEPTH_BINS, CHANNELS))
    x = keras.layers.Conv1D(24, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out, name="weak_layer_detector")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    return model


def train(data):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t


def main():
    full, fit_s = train(SnowpackProbes(STEPS, seed=89))
    emit({"steps_per_second": 1.0 / full})
    print("snowpack normal: %.4f s/step, fit %.1f s, wall %.1f s" % (full, fit_s, time.perf_counter() - T0))
    if TRUTH:
        xb, yb = SnowpackProbes(1, seed=7)[0]
        comp, _ = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("snowpack truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
