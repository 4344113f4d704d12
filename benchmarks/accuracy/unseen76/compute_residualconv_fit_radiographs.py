"""X-radiograph layer classifier for paintings (compute-bound, model.fit).

Data path: synthetic 32x32 X-radiograph patches are generated once with
numpy, placed in memory as tensors and fed by
tf.data.Dataset.from_tensor_slices(...).batch().cache().repeat().prefetch() - no
Python per step.  Model: a deep residual CNN (stacked 3x3 convolutions at
full resolution).  Deliberate bottleneck: the convolution math itself
(compute-bound).
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


BATCH = 16
STEPS = 25
EPOCHS = 3
SIZE = 32
NCLASS = 6


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, NCLASS, n).astype(np.int32)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    base = np.stack([np.sin((k + 1) * 6 * xx + k * yy) for k in range(NCLASS)])
    x = base[y] * 0.5 + rng.normal(0, 0.5, (n, SIZE, SIZE))
    return x[..., None].astype(np.float32), y


X, Y = make_data(1024, seed=76)


def make_dataset():
    return (tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH, drop_remainder=True)
            .cache().repeat().prefetch(2))


def res_block(x, ch):
    s = x
    x = keras.layers.Conv2D(ch, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(ch, 3, padding="same")(x)
    return keras.layers.ReLU()(keras.layers.Add()([s, x]))


def build_model():
    inp = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    for _ in range(2):
        x = res_block(x, 16)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = res_block(x, 32)
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
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"radiographs: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)


if __name__ == "__main__":
    main()
