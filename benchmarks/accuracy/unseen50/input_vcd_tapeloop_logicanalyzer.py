"""Bus-protocol recognition from logic-analyzer captures (UART vs. SPI vs. I2C traffic).
Each capture is written to disk as a Value Change Dump (.vcd) text file with $var headers and
#timestamp / value-change lines. The training loop reads a batch of files, parses the VCD text
in Python, resamples the change list onto a fixed 8-channel grid and trains a Conv1D classifier
with a @tf.function GradientTape step inside a plain Python loop.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N_FILES = 240
N_CH = 8
GRID = 1024
T_END = 40960
BATCH = 16
STEPS = 90
IDS = "!\"#$%&'("


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def synth_capture(rng, proto):
    """Return dict channel -> list of (time, value) changes."""
    changes = {c: [(0, 0)] for c in range(N_CH)}
    t = 0
    period = int(rng.integers(8, 16))
    while t < T_END - 40 * period:
        byte = int(rng.integers(256))
        if proto == 0:      # UART on ch0: start bit, 8 data, stop
            bits = [0] + [(byte >> i) & 1 for i in range(8)] + [1]
            for b in bits:
                changes[0].append((t, b)); t += period
            t += int(rng.integers(0, 5 * period))
        elif proto == 1:    # SPI: ch1 clk, ch2 mosi, ch3 cs
            changes[3].append((t, 0)); t += period
            for i in range(8):
                changes[2].append((t, (byte >> (7 - i)) & 1))
                changes[1].append((t + period // 2, 1)); changes[1].append((t + period, 0))
                t += period
            changes[3].append((t, 1)); t += 2 * period
        else:               # I2C: ch4 scl, ch5 sda
            changes[5].append((t, 0)); t += period
            for i in range(9):
                changes[5].append((t, (byte >> (7 - i)) & 1 if i < 8 else 0))
                changes[4].append((t + period // 3, 1)); changes[4].append((t + period, 0))
                t += period
            changes[5].append((t, 1)); t += 3 * period
        for c in (6, 7):    # unrelated GPIO noise
            if rng.random() < 0.3:
                changes[c].append((t, int(rng.integers(2))))
    return changes


def write_vcd(path, changes):
    events = {}
    for c, lst in changes.items():
        for tt, v in lst:
            events.setdefault(tt, []).append((c, v))
    with open(path, "w") as f:
        f.write("$date 2026-12-05 $end\n$version sigrok-like $end\n$timescale 1 ns $end\n")
        f.write("$scope module capture $end\n")
        for c in range(N_CH):
            f.write(f"$var wire 1 {IDS[c]} D{c} $end\n")
        f.write("$upscope $end\n$enddefinitions $end\n")
        for tt in sorted(events):
            f.write(f"#{tt}\n")
            for c, v in events[tt]:
                f.write(f"{v}{IDS[c]}\n")


def parse_vcd(path):
    idmap = {}
    grid = np.zeros((GRID, N_CH), np.float32)
    state = [0] * N_CH
    last_slot = 0
    scale = T_END / GRID
    in_header = True
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if in_header:
                if line.startswith("$var"):
                    parts = line.split()
                    idmap[parts[3]] = int(parts[4][1:])
                elif line.startswith("$enddefinitions"):
                    in_header = False
                continue
            if line[0] == "#":
                slot = min(int(int(line[1:]) / scale), GRID)
                if slot > last_slot:
                    grid[last_slot:slot] = state
                    last_slot = slot
            else:
                state[idmap[line[1:]]] = int(line[0])
    grid[last_slot:] = state
    # edge-density channels help the classifier separate clocked buses
    edges = np.abs(np.diff(grid, axis=0, prepend=grid[:1]))
    return np.concatenate([grid, edges], axis=1)


def make_model():
    inp = keras.Input((GRID, 2 * N_CH))
    x = inp
    for f in (96, 128, 160):
        x = keras.layers.Conv1D(f, 9, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(3)(x)
    return keras.Model(inp, out)


def train(model, next_batch):
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for i in range(STEPS):
        x, y = next_batch(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_vcd_tapeloop_logicanalyzer_")
    try:
        files, labels = [], []
        for i in range(N_FILES):
            proto = i % 3
            p = os.path.join(tmp, f"cap_{i:04d}.vcd")
            write_vcd(p, synth_capture(rng, proto))
            files.append(p)
            labels.append(proto)
        labels = np.asarray(labels, np.int32)
        order = np.random.default_rng(SEED + 1)

        def next_batch(i):
            idx = order.integers(0, N_FILES, BATCH)
            x = np.stack([parse_vcd(files[k]) for k in idx])
            return x, labels[idx]

        model = make_model()
        full, loss = train(model, next_batch)
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={loss:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next_batch(0)
            model2 = make_model()
            comp, _ = train(model2, lambda i: (xb, yb))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_vcd_tapeloop_logicanalyzer: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
