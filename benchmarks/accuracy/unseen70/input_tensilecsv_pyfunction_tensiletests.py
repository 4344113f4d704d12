import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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

# ---- input_tensilecsv_pyfunction_tensiletests: raw stress-strain CSV exports from a
# universal testing machine are decoded inside tf.py_function in a tf.data map:
# csv parsing, toe compensation, modulus fit, 0.2% offset yield, resampling.
BATCH = 64
STEPS = 55
EPOCHS = 3
ROWS = 240
POINTS = 128


def make_csvs(n, seed=70):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        E = rng.uniform(60e3, 210e3)  # MPa
        sy = rng.uniform(150, 900)
        n_h = rng.uniform(0.05, 0.3)
        strain = np.sort(rng.uniform(0, 0.25, ROWS))
        stress = np.where(strain < sy / E, E * strain, sy * (1 + (strain - sy / E) / 0.002) ** n_h / (1 + 0.0) )
        stress = np.minimum(stress, sy * 3) + rng.normal(0, 2.0, ROWS)
        rows = ["time_s,extension_mm,load_N,strain,stress_MPa"]
        for j in range(ROWS):
            rows.append(f"{j*0.05:.2f},{strain[j]*50:.5f},{stress[j]*20:.3f},{strain[j]:.6f},{stress[j]:.4f}")
        texts.append("\n".join(rows))
        labels.append(np.float32(0 if sy < 400 else (1 if sy < 650 else 2)))
    return texts, np.array(labels, np.float32)


def decode(text):
    lines = text.numpy().decode().split("\n")[1:]
    strain, stress = [], []
    for ln in lines:
        cols = ln.split(",")
        strain.append(float(cols[3])); stress.append(float(cols[4]))
    strain = np.array(strain); stress = np.array(stress)
    order = np.argsort(strain)
    strain, stress = strain[order], stress[order]
    # modulus from the steepest 20-point window (toe compensation)
    best = 0.0
    for k in range(0, len(strain) - 20, 5):
        ds = strain[k + 19] - strain[k]
        if ds > 0:
            best = max(best, (stress[k + 19] - stress[k]) / ds)
    offset = stress - best * (strain - 0.002)
    cross = np.argmax(offset < 0) if np.any(offset < 0) else len(strain) - 1
    ys = stress[cross]
    uts = stress.max()
    grid = np.linspace(0, 0.25, POINTS)
    curve = np.interp(grid, strain, stress) / 1000.0
    feats = np.array([best / 2e5, ys / 1000, uts / 1000, strain[np.argmax(stress)]], np.float32)
    return curve.astype(np.float32)[:, None], feats


def tf_decode(text, label):
    curve, feats = tf.py_function(decode, [text], [tf.float32, tf.float32])
    curve.set_shape((POINTS, 1)); feats.set_shape((4,))
    return (curve, feats), label


TEXTS, LABELS = make_csvs(BATCH * 8)


def make_ds():
    ds = tf.data.Dataset.from_tensor_slices((TEXTS, LABELS)).repeat()
    return ds.map(tf_decode).batch(BATCH)


def make_model():
    c_in = keras.Input((POINTS, 1)); f_in = keras.Input((4,))
    x = c_in
    for ch in (48, 48):
        x = keras.layers.Conv1D(ch, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    h = keras.layers.Concatenate()([x, f_in])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(3, activation="softmax")(h)
    m = keras.Model([c_in, f_in], out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    full = run(make_ds())
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[input_tensilecsv_pyfunction_tensiletests] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_tensilecsv_pyfunction_tensiletests] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
