"""Ski-lift gate scans: a Python generator turns raw RFID gate-scan log lines
into per-window congestion features, fed to model.fit via
tf.data.Dataset.from_generator. Bottleneck: the per-sample Python parsing."""
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


GATES = 16
KINDS = ("DAY", "SEASON", "HALF", "CHILD", "SENIOR")
FEAT = GATES + 12 + len(KINDS) + 3          # gate histogram, hour histogram, kinds, stats
BATCH = 128
STEPS = 130
EPOCHS = 3
SCANS_PER_WINDOW = 60


def raw_scan_lines(rng, n):
    gates = rng.integers(0, GATES, n)
    secs = rng.integers(8 * 3600, 16 * 3600, n)
    tickets = rng.integers(0, 10 ** 9, n)
    kinds = rng.integers(0, len(KINDS), n)
    oks = rng.random(n) > 0.04
    lines = []
    for g, s, t, k, ok in zip(gates.tolist(), secs.tolist(), tickets.tolist(), kinds.tolist(), oks.tolist()):
        lines.append("LIFT-A;G%02d;%02d:%02d:%02d;%010d;%s;ok=%d"
                     % (g, s // 3600, (s % 3600) // 60, s % 60, t, KINDS[k], int(ok)))
    return lines


def parse_window(lines):
    gate_hist = [0.0] * GATES
    hour_hist = [0.0] * 12
    kind_hist = dict((k, 0.0) for k in KINDS)
    rejects = 0
    last = None
    gaps = []
    seen = set()
    for line in sorted(lines, key=lambda l: l.split(";")[2]):
        _, gate, hms, ticket, kind, ok = line.split(";")
        h, m, s = (int(v) for v in hms.split(":"))
        sec = h * 3600 + m * 60 + s
        gate_hist[int(gate[1:])] += 1.0
        hour_hist[min(h - 8, 11)] += 1.0
        kind_hist[kind] += 1.0
        if ok.endswith("0"):
            rejects += 1
        if ticket in seen:
            rejects += 1
        seen.add(ticket)
        if last is not None:
            gaps.append(sec - last)
        last = sec
    n = float(len(lines))
    mean_gap = sum(gaps) / max(len(gaps), 1)
    var_gap = sum((g - mean_gap) ** 2 for g in gaps) / max(len(gaps), 1)
    feats = [v / n for v in gate_hist] + [v / n for v in hour_hist] + [kind_hist[k] / n for k in KINDS]
    feats += [rejects / n, mean_gap / 600.0, (var_gap ** 0.5) / 600.0]
    busiest = max(gate_hist) / n
    label = 0 if busiest < 0.12 else (1 if busiest < 0.16 else 2)
    return feats, label


def gate_scan_batches(seed=89):
    rng = np.random.default_rng(seed)
    while True:
        xs, ys = [], []
        for _ in range(BATCH):
            f, lab = parse_window(raw_scan_lines(rng, SCANS_PER_WINDOW))
            xs.append(f)
            ys.append(lab)
        yield np.asarray(xs, np.float32), np.asarray(ys, np.int32)


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
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(896, activation="relu")(inp)
    x = keras.layers.Dense(896, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inp, out, name="gate_congestion")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], shuffle=False, verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t


def main():
    sig = (tf.TensorSpec((BATCH, FEAT), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
    ds = tf.data.Dataset.from_generator(gate_scan_batches, output_signature=sig)
    full, fit_s = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print("liftgates normal: %.4f s/step, fit %.1f s, wall %.1f s" % (full, fit_s, time.perf_counter() - T0))
    if TRUTH:
        xb, yb = next(gate_scan_batches(seed=7))
        comp, _ = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("liftgates truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
