"""VFX compositing: predict a per-plate key-spill class (none / green / blue /
mixed) from 128x128 half-float plates. A keras.utils.PyDataset decodes each
plate from raw float16 bytes, converts linear light to display values and feeds
model.fit, but it also appends every decoded batch (linear + display plates) to a
"shot-matching history" list that nothing ever trims, so resident memory grows
with every step. Intended bottleneck: MEMORY (unbounded history in the loader)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

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


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
import resource

SEED, BATCH, STEPS, EPOCHS = 75, 32, 50, 3
H = W = 128
NCLS = 4


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def make_plates(n, rng):
    raw, labels = [], []
    for _ in range(n):
        lab = int(rng.integers(NCLS))
        img = rng.uniform(0, 1.5, (H, W, 3)).astype(np.float16)
        if lab in (1, 3):
            img[:, :, 1] += np.float16(0.4)
        if lab in (2, 3):
            img[:, :, 2] += np.float16(0.4)
        raw.append(img.tobytes())
        labels.append(lab)
    return raw, np.array(labels, np.int32)


class PlateLoader(keras.utils.PyDataset):
    def __init__(self, raw, labels):
        super().__init__(workers=1, use_multiprocessing=False)
        self.raw, self.labels = raw, labels
        self.history = []  # "shot-matching history": never trimmed

    def __len__(self):
        return STEPS

    def __getitem__(self, i):
        idx = [(i * BATCH + j) % len(self.raw) for j in range(BATCH)]
        lin = np.stack([np.frombuffer(self.raw[k], np.float16).reshape(H, W, 3).astype(np.float32) for k in idx])
        disp = np.clip(lin, 0, None) ** (1 / 2.4)
        self.history.append((lin, disp))
        return disp, self.labels[idx]


def make_model():
    keras.utils.set_random_seed(SEED)
    L = keras.layers
    m = keras.Sequential([keras.Input((H, W, 3)), L.Conv2D(16, 5, strides=4, activation="relu"),
                          L.Conv2D(32, 3, strides=2, activation="relu"), L.GlobalAveragePooling2D(),
                          L.Dense(NCLS)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


class RssProbe(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: peak RSS {rss_mib():.0f} MiB", flush=True)


def run(data, **kw):
    model, timer = make_model(), StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer, RssProbe()], verbose=0, **kw)
    return sec_per_step(timer.gaps)


def main():
    raw, labels = make_plates(256, np.random.default_rng(SEED))
    loader = PlateLoader(raw, labels)
    before = rss_mib()
    full = run(loader)
    after = rss_mib()
    compute = None
    if TRUTH:
        x, y = loader[0]
        compute = run(tf.data.Dataset.from_tensors((x, y)).repeat(), steps_per_epoch=STEPS)
    report("memory_platehistory_pydataset_compositing", full, compute,
           f"rss_before={before:.0f}MiB rss_after={after:.0f}MiB history_batches={len(loader.history)}")


if __name__ == "__main__":
    main()
