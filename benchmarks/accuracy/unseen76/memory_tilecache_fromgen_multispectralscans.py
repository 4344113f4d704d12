"""Multispectral (8-band) scan tiles -> underdrawing detector, with a
leaking decode cache (memory-bound).

Data path: 8-band tiles are synthesised/decoded and augmented in a Python
generator that feeds model.fit via tf.data.Dataset.from_generator (one
whole batch per yield).  The generator memoises every augmented batch in a
module-level dict keyed by (epoch-step, augmentation seed) "to avoid
re-decoding", but the keys never repeat, so the cache grows by ~4 MiB per
step for the whole run.  Deliberate bottleneck: unbounded host-memory
growth from the cache (memory-bound); the model itself is small.
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


BATCH = 32
STEPS = 100
EPOCHS = 3
SIZE = 64
BANDS = 8
NCLASS = 2

DECODE_CACHE = {}


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


BASE = np.random.default_rng(76).normal(0.5, 0.1, (16, SIZE, SIZE, BANDS)).astype(np.float32)


def batch_generator():
    rng = np.random.default_rng(7)
    step = 0
    while True:
        seed = int(rng.integers(0, 2**31))
        key = (step, seed)
        if key not in DECODE_CACHE:  # never hits: keys are unique
            r = np.random.default_rng(seed)
            idx = r.integers(0, len(BASE), BATCH)
            y = r.integers(0, NCLASS, BATCH).astype(np.int32)
            x = BASE[idx] * r.uniform(0.9, 1.1, (BATCH, 1, 1, BANDS)).astype(np.float32)
            x[y == 1, 20:40, 20:40, 5:] += 0.2  # infrared underdrawing signal
            DECODE_CACHE[key] = (x, y)
        step += 1
        yield DECODE_CACHE[key]


class RssLogger(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: RSS {rss_mib():.0f} MiB, cache {len(DECODE_CACHE)} batches")


def make_dataset():
    sig = (tf.TensorSpec((BATCH, SIZE, SIZE, BANDS), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
    return tf.data.Dataset.from_generator(batch_generator, output_signature=sig)


def build_model():
    inp = keras.Input((SIZE, SIZE, BANDS))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
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
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, RssLogger()], verbose=0)
    return timer.seconds_per_step()


def main():
    print(f"  start: RSS {rss_mib():.0f} MiB")
    full = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"multispectralscans: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"cache {len(DECODE_CACHE)} batches, RSS {rss_mib():.0f} MiB, "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = next(batch_generator())
        DECODE_CACHE.clear()
        compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)


if __name__ == "__main__":
    main()
