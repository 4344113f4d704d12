"""CNC milling tool-wear classifier fed by a Python generator (tf.data.Dataset.from_generator).

Each sample is a raw text spindle log (one line per millisecond tick). The generator parses
every line in Python (split / float), crops a random window, adds sensor noise and
standardises per channel. That Python parsing is the deliberate bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 32
STEPS = 180
EPOCHS = 2
LINES = 160
WINDOW = 128
POOL = 256


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_logs(rng):
    logs, labels = [], []
    for i in range(POOL):
        wear = i % 3
        t = np.arange(LINES) * 0.001
        rpm = 12000 + 40 * wear * np.sin(2 * np.pi * 90 * t) + rng.normal(0, 15, LINES)
        load = 0.4 + 0.1 * wear + 0.05 * np.sin(2 * np.pi * 30 * t) + rng.normal(0, 0.02, LINES)
        vib = 0.01 * (1 + wear) * np.sin(2 * np.pi * 250 * t) + rng.normal(0, 0.004, LINES)
        temp = 38 + 2.5 * wear + rng.normal(0, 0.2, LINES)
        lines = ["t=%.4f rpm=%.2f load=%.4f vib=%.5f temp=%.2f tool=T%02d" % (t[k], rpm[k], load[k], vib[k], temp[k], i % 12)
                 for k in range(LINES)]
        logs.append("\n".join(lines))
        labels.append(wear)
    return logs, np.array(labels, np.int32)


def parse_log(text):
    rows = []
    for line in text.split("\n"):
        fields = {}
        for tok in line.split(" "):
            k, v = tok.split("=", 1)
            fields[k] = v
        rows.append([float(fields["rpm"]), float(fields["load"]), float(fields["vib"]), float(fields["temp"])])
    return np.asarray(rows, np.float32)


def sample_gen(logs, labels, seed):
    rng = np.random.default_rng(seed)
    while True:
        i = int(rng.integers(0, len(logs)))
        arr = parse_log(logs[i])
        off = int(rng.integers(0, LINES - WINDOW + 1))
        win = arr[off:off + WINDOW]
        win = win + rng.normal(0, 0.01, win.shape).astype(np.float32) * win.std(axis=0)
        win = (win - win.mean(axis=0)) / (win.std(axis=0) + 1e-6)
        yield win.astype(np.float32), labels[i]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((WINDOW, 4))
    x = keras.layers.Conv1D(48, 5, activation="relu", padding="same")(inp)
    x = keras.layers.Conv1D(48, 5, activation="relu", padding="same")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 5, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(3, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    logs, labels = make_logs(rng)
    sig = (tf.TensorSpec((WINDOW, 4), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(lambda: sample_gen(logs, labels, SEED), output_signature=sig)
    ds = ds.batch(BATCH).prefetch(2)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "cncmilling spindle-log fromgen: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
