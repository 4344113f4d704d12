"""Coastal oceanography: flag hypoxic bottom water from raw CTD casts.

Input path: keras.utils.PyDataset whose __getitem__ parses the text of each CTD cast
(header + whitespace-separated scan lines), drops flagged scans, bins the profile onto a
1-dbar grid with np.interp and derives a seawater density anomaly.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 32, 100, 3
N_CASTS, GRID = 800, 96


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def make_casts(rng):
    casts, labels = [], []
    for i in range(N_CASTS):
        hyp = int(rng.random() < 0.4)
        n = int(rng.integers(150, 220))
        p = np.sort(rng.uniform(0.5, GRID, n))
        t = 18 - 10 * (1 - np.exp(-p / 25)) + rng.normal(0, 0.1, n)
        s = 33 + 1.5 * (1 - np.exp(-p / 30)) + rng.normal(0, 0.02, n)
        o = 7.5 - (5.5 if hyp else 2.0) * (p / GRID) ** 2 + rng.normal(0, 0.15, n)
        f = np.exp(-((p - 20) / 8) ** 2) * rng.uniform(0.5, 3) + rng.normal(0, 0.05, n)
        flag = (rng.random(n) < 0.03).astype(int)
        lines = [f"* Station {i:05d} lat={rng.uniform(36, 38):.4f} lon={-rng.uniform(121, 123):.4f}",
                 "# name 0 = prDM  1 = t090C  2 = sal00  3 = sbeox0ML/L  4 = flECO  5 = flag", "*END*"]
        lines += [f"{a:9.3f} {b:9.4f} {c:9.4f} {d:8.4f} {e:8.4f} {g:d}" for a, b, c, d, e, g in zip(p, t, s, o, f, flag)]
        casts.append("\n".join(lines))
        labels.append(hyp)
    return casts, np.asarray(labels, np.float32)


def parse_cast(text):
    body = text.split("*END*", 1)[1]
    cols = [[], [], [], [], []]
    for line in body.strip().splitlines():
        parts = line.split()
        if int(parts[5]):
            continue
        for k in range(5):
            cols[k].append(float(parts[k]))
    p = np.asarray(cols[0])
    grid = np.arange(1, GRID + 1, dtype=np.float64)
    prof = [np.interp(grid, p, np.asarray(c)) for c in cols[1:]]
    t, s = prof[0], prof[1]
    sigma = (999.842594 + 6.793952e-2 * t - 9.095290e-3 * t ** 2 + 1.001685e-4 * t ** 3
             + (0.824493 - 4.0899e-3 * t + 7.6438e-5 * t ** 2) * s - 1000.0)
    return np.stack([(t - 12) / 5, (s - 34) / 1, (prof[2] - 5) / 2, prof[3], (sigma - 25) / 2], -1)


class CastSequence(keras.utils.PyDataset):
    def __init__(self, casts, labels, seed):
        super().__init__()
        self.casts, self.labels = casts, labels
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        pick = self.rng.integers(0, len(self.casts), BATCH)
        x = np.stack([parse_cast(self.casts[i]) for i in pick]).astype(np.float32)
        return x, self.labels[pick]


def make_model():
    return keras.Sequential([
        keras.Input((GRID, 5)),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(data):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True))
    timer = StepTimer()
    if isinstance(data, keras.utils.PyDataset):
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    casts, labels = make_casts(np.random.default_rng(72))
    full = train(CastSequence(casts, labels, 1))
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"ctdcasts: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if TRUTH:
        x, y = CastSequence(casts, labels, 2)[0]
        comp = train(tf.data.Dataset.from_tensors((x, y)).repeat())
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
