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

# ---- memory_genleak_fabricscans: a fabric-defect scanner feed. The Python generator
# that produces normalised 96x96 line-scan tiles also appends every batch it
# yields to a module-level "hard example pool" that is never trimmed, so RSS grows
# by ~7 MB per step for the whole run.
BATCH = 32
STEPS = 70
EPOCHS = 3
SIZE = 96
HARD_EXAMPLE_POOL = []  # grows without bound: the bug


def scan_batches(seed, keep):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.5, 0.05, (SIZE, SIZE, 3)).astype(np.float32)
    while True:
        weave = np.sin(np.arange(SIZE) * rng.uniform(0.5, 1.5))[None, :, None].astype(np.float32)
        x = base[None] + 0.1 * weave + rng.normal(0, 0.05, (BATCH, SIZE, SIZE, 3)).astype(np.float32)
        y = rng.integers(0, 2, BATCH).astype(np.int32)
        x[y == 1, 40:56, 40:56, :] += 0.4  # defect blob
        if keep:
            # keep the tile batch and its mirrored copy "for later hard-example replay"
            HARD_EXAMPLE_POOL.append((x.copy(), x[:, :, ::-1].copy(), y.copy()))
        yield x, y


def make_model():
    m = keras.Sequential([keras.Input((SIZE, SIZE, 3)),
                          keras.layers.Conv2D(16, 5, strides=4, activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(2)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def make_ds(keep):
    sig = (tf.TensorSpec((BATCH, SIZE, SIZE, 3), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
    return tf.data.Dataset.from_generator(lambda: scan_batches(70, keep), output_signature=sig)


def rss_mib():
    with open("/proc/self/status") as fh:
        for ln in fh:
            if ln.startswith("VmRSS"):
                return int(ln.split()[1]) / 1024
    return 0.0


class RssLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: RSS {rss_mib():.0f} MiB, pool {len(HARD_EXAMPLE_POOL)} batches")


def run(ds):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, RssLog()], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    print(f"  start: RSS {rss_mib():.0f} MiB")
    full = run(make_ds(keep=True))
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[memory_genleak_fabricscans] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, RSS {rss_mib():.0f} MiB, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        HARD_EXAMPLE_POOL.clear()
        batch = next(scan_batches(70, keep=False))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[memory_genleak_fabricscans] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
