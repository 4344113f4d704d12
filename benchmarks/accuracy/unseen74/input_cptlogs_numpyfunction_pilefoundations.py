"""Pile-capacity regressor: cone-penetration-test (CPT) logs stored as CSV text are parsed
inside a tf.data map by tf.numpy_function (split, float, soil-behaviour index, resampling)."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

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


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

DEPTHS = 64
ROWS = 120
BATCH = 32
STEPS = 30
EPOCHS = 3
N_LOGS = 600


def make_cpt_logs(n, seed=21):
    rng = np.random.default_rng(seed)
    texts, caps = [], []
    for _ in range(n):
        depth = np.sort(rng.uniform(0.0, 30.0, ROWS))
        layer = np.cumsum(rng.normal(0, 0.3, ROWS))
        qc = np.abs(2.0 + 0.4 * depth + 3.0 * np.sin(layer) + rng.normal(0, 0.5, ROWS))
        fs = np.abs(0.02 * qc + rng.normal(0, 0.01, ROWS))
        u2 = 0.01 * depth * 9.81 + rng.normal(0, 0.02, ROWS)
        lines = ["depth_m,qc_MPa,fs_MPa,u2_MPa,remark"]
        for r in range(ROWS):
            lines.append(f"{depth[r]:.3f},{qc[r]:.4f},{fs[r]:.5f},{u2[r]:.5f},{'CLAY' if fs[r]/qc[r] > 0.02 else 'SAND'}")
        texts.append("\n".join(lines))
        caps.append(float(np.mean(qc[depth > 15]) * 0.3 + np.sum(fs) * 0.5))
    return np.array(texts, dtype=object), np.array(caps, np.float32)


def parse_cpt(raw):
    text = raw.decode("utf-8")
    rows = []
    for ln in text.split("\n")[1:]:
        f = ln.split(",")
        rows.append((float(f[0]), float(f[1]), float(f[2]), float(f[3]), 1.0 if f[4] == "CLAY" else 0.0))
    a = np.asarray(rows, np.float64)
    z, qc, fs, u2, clay = a.T
    sv = 0.019 * z
    qt = qc + u2 * 0.2
    qn = np.maximum((qt - sv) / 0.1, 1e-3)
    fr = np.maximum(fs / np.maximum(qt - sv, 1e-3) * 100, 1e-3)
    ic = np.sqrt((3.47 - np.log10(qn)) ** 2 + (np.log10(fr) + 1.22) ** 2)
    grid = np.linspace(0.0, 30.0, DEPTHS)
    out = np.stack([np.interp(grid, z, np.log1p(qt)), np.interp(grid, z, fr),
                    np.interp(grid, z, ic), np.interp(grid, z, clay)], -1)
    return out.astype(np.float32)


def build_model():
    inp = keras.Input((DEPTHS, 4))
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling1D()(x)
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_cptlogs_numpyfunction_pilefoundations_")
    try:
        texts, caps = make_cpt_logs(N_LOGS)

        def to_feats(raw, cap):
            x = tf.numpy_function(parse_cpt, [raw], tf.float32)
            x.set_shape((DEPTHS, 4))
            return x, cap

        ds = (tf.data.Dataset.from_tensor_slices((texts.astype(str), caps))
              .shuffle(N_LOGS, seed=1).repeat()
              .map(to_feats, num_parallel_calls=2)
              .batch(BATCH).prefetch(2))
        tf.random.set_seed(0)
        timer = StepTimer()
        model = build_model()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_cptlogs_numpyfunction_pilefoundations] full {full*1000:.1f} ms/step "
              f"({1.0/full:.2f} steps/s) over {len(timer.gaps)} gaps, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2 = StepTimer()
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_cptlogs_numpyfunction_pilefoundations] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
