"""Pigment identification from fibre-optic reflectance spectra (FORS).

Data path: each measurement is a text record "wavelength:reflectance;..."
exported by the spectrometer.  A tf.data pipeline maps every record through
tf.numpy_function, which splits and parses the text, resamples onto a fixed
grid with np.interp, smooths it and takes the first derivative (Kubelka-Munk
style features).  Batches feed model.fit.  Deliberate bottleneck: the
per-record Python parsing inside tf.numpy_function (input-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


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

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


BATCH = 64
STEPS = 50
EPOCHS = 3
NPTS = 600
GRID = 256
NCLASS = 10
GRID_NM = np.linspace(400.0, 1000.0, GRID)


def make_records(n, seed):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(420, 980, (NCLASS, 3))
    recs, labels = [], []
    for i in range(n):
        cls = int(rng.integers(NCLASS))
        wl = np.sort(rng.uniform(395, 1005, NPTS))
        r = 0.2 + sum(0.25 / (1 + np.exp(-(wl - c) / 15.0)) for c in centers[cls])
        r += rng.normal(0, 0.01, NPTS)
        recs.append(";".join(f"{a:.2f}:{b:.4f}" for a, b in zip(wl, r)))
        labels.append(cls)
    return np.array(recs), np.array(labels, np.int32)


def parse_spectrum(text):
    pairs = [p.split(":") for p in text.decode().split(";")]
    wl = np.array([float(a) for a, _ in pairs])
    r = np.array([float(b) for _, b in pairs])
    spec = np.interp(GRID_NM, wl, r)
    k = np.ones(7) / 7.0
    smooth = np.convolve(np.pad(spec, 3, mode="edge"), k, mode="valid")
    km = (1 - smooth) ** 2 / (2 * np.maximum(smooth, 1e-3))
    deriv = np.gradient(smooth) * 50.0
    return np.stack([smooth, km / 5.0, deriv], axis=1).astype(np.float32)


RECORDS, LABELS = make_records(1500, seed=76)


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((RECORDS, LABELS)).shuffle(1500, seed=1).repeat()

    def _map(text, label):
        x = tf.numpy_function(parse_spectrum, [text], tf.float32)
        x.set_shape((GRID, 3))
        return x, label

    return ds.map(_map).batch(BATCH)


def build_model():
    inp = keras.Input((GRID, 3))
    x = keras.layers.Conv1D(32, 7, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(76)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"pigmentid: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)


if __name__ == "__main__":
    main()
