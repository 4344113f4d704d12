"""Ichthyoplankton surveys: identify larval fish taxa from image-derived morphometrics.

Cause: an on_epoch_end callback runs model.predict over a very large held-out survey
(all archived plankton-net samples) and computes per-taxon precision/recall/macro-F1 and a
confusion matrix every epoch. Training batches come from an in-memory tf.data pipeline.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 128, 50, 3
N_TAXA, N_FEAT, N_TRAIN, N_HOLDOUT = 20, 48, 20000, 160000


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


class SurveyF1(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds, self.f1 = x, y, 0.0, None

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=1024, verbose=0).argmax(1)
        cm = np.zeros((N_TAXA, N_TAXA), np.int64)
        np.add.at(cm, (self.y, pred), 1)
        tp = np.diag(cm).astype(np.float64)
        prec, rec = tp / np.maximum(cm.sum(0), 1), tp / np.maximum(cm.sum(1), 1)
        self.f1 = float(np.mean(2 * prec * rec / np.maximum(prec + rec, 1e-9)))
        self.seconds += time.perf_counter() - t


def make_data(rng, n, centers):
    y = rng.integers(0, N_TAXA, n)
    x = centers[y] + rng.normal(0, 1.0, (n, N_FEAT))
    return x.astype(np.float32), y.astype(np.int32)


def make_model():
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_TAXA),
    ])


def train(ds, hx, hy):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer, ev = StepTimer(), SurveyF1(hx, hy)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, ev], verbose=0)
    return timer.sec_per_step(), ev


def main():
    rng = np.random.default_rng(72)
    centers = rng.normal(0, 0.6, (N_TAXA, N_FEAT))
    x, y = make_data(rng, N_TRAIN, centers)
    hx, hy = make_data(rng, N_HOLDOUT, centers)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=1).repeat().batch(BATCH).prefetch(2)
    full, ev = train(ds, hx, hy)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    line = (f"larvalfish: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), macro-F1 {ev.f1:.3f}, "
            f"evaluation {ev.seconds:.1f}s = {100 * ev.seconds / wall:.0f}% of wall {wall:.1f}s")
    if TRUTH:
        comp, ev2 = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), hx, hy)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}, total wall {time.perf_counter() - T0:.1f}s"
    print(line)


if __name__ == "__main__":
    main()
