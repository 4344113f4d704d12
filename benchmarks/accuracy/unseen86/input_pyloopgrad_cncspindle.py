import time; T0 = time.perf_counter()
"""CNC router spindle tool-wear regressor trained with a custom GradientTape loop.

The router controller writes a text log line per 10 ms sample
("2026-03-02T07:14:09.120 SPN rpm=18000 load=41.7 vib=0.31 temp=38.2 feed=2400").
For every batch, a Python loop synthesises the log lines for each cut, parses
them back with str.split / float, builds 64-sample windows with rolling RMS
vibration, and the arrays go straight into a @tf.function train step.
Bottleneck: Python log parsing and windowing per step (input-bound).
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

WIN = 64
FEATS = 6
BATCH = 48
STEPS = 550


def spindle_log_lines(rng, wear):
    rpm = 18000 + rng.normal(0, 150)
    lines = []
    for i in range(WIN):
        load = 35 + 25 * wear + rng.normal(0, 2)
        vib = 0.2 + 0.6 * wear + abs(rng.normal(0, 0.05))
        temp = 36 + 10 * wear + 0.02 * i
        lines.append(f"2026-03-02T07:14:{i // 100:02d}.{i % 100:02d}0 SPN rpm={rpm + rng.normal(0, 20):.0f} "
                     f"load={load:.2f} vib={vib:.3f} temp={temp:.2f} feed={2400 + rng.normal(0, 30):.0f}")
    return lines


def parse_window(lines):
    rows = []
    vib_hist = []
    for line in lines:
        fields = dict(kv.split("=") for kv in line.split()[2:])
        vib = float(fields["vib"])
        vib_hist.append(vib)
        recent = vib_hist[-8:]
        rms = (sum(v * v for v in recent) / len(recent)) ** 0.5
        rows.append([float(fields["rpm"]) / 18000.0, float(fields["load"]) / 50.0, vib,
                     float(fields["temp"]) / 40.0, float(fields["feed"]) / 2400.0, rms])
    return rows


def next_batch(rng):
    wear = rng.uniform(0, 1, BATCH)
    x = np.array([parse_window(spindle_log_lines(rng, w)) for w in wear], np.float32)
    return x, wear.astype(np.float32)[:, None]


def build_model():
    inp = keras.Input((WIN, FEATS))
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x))


def train(batch_source):
    keras.utils.set_random_seed(86)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def main():
    rng = np.random.default_rng(86)
    full, loss = train(lambda: next_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    msg = f"[cncspindle] full {full*1000:.1f} ms/step loss {loss:.4f}"
    if TRUTH:
        fx, fy = next_batch(np.random.default_rng(87))
        compute, _ = train(lambda: (fx, fy))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
