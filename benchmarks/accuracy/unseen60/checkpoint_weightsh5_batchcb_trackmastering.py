import time
_WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Track mastering targets: predicts per-band EQ gains and a loudness target
# for catalogue tracks from a learned per-track embedding (an 800k-row table)
# plus a short spectral descriptor. A custom callback writes the full weights
# (.weights.h5) after every batch for "crash safety". The step itself is
# cheap; the repeated ~300 MB weight files dominate the wall time.
# ---------------------------------------------------------------------------
SEED = 60
N_TRACKS = 800000
EMB = 96
SPEC = 32
N_OUT = 11
BATCH = 64
STEPS = 14
EPOCHS = 2
SAVE_EVERY = 1


class BatchWeightsSaver(keras.callbacks.Callback):
    """Stamp first, then save, then restart the StepTimer clock after the save."""

    def __init__(self, folder, timer):
        super().__init__()
        self.folder, self.timer = folder, timer
        self.seconds, self.saves = 0.0, 0

    def on_train_batch_end(self, batch, logs=None):
        self.timer.on_train_batch_end(batch, logs)
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save_weights(os.path.join(self.folder, "mastering_%d.weights.h5" % (self.saves % 2)))
            self.seconds += time.perf_counter() - t
            self.saves += 1
            self.timer._last = time.perf_counter()

    def on_epoch_begin(self, epoch, logs=None):
        self.timer.on_epoch_begin(epoch, logs)


def make_data(rng, n):
    ids = rng.integers(0, N_TRACKS, n).astype(np.int32)
    spec = rng.normal(0, 1, (n, SPEC)).astype(np.float32)
    y = np.tanh(spec[:, :N_OUT] * 0.5 + (ids[:, None] % 7) / 7.0).astype(np.float32)
    return (ids, spec), y


def build_model():
    keras.utils.set_random_seed(SEED)
    tid = keras.Input((), dtype="int32")
    spec = keras.Input((SPEC,))
    e = keras.layers.Embedding(N_TRACKS, EMB)(tid)
    h = keras.layers.Concatenate()([e, spec])
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(N_OUT)(h)
    m = keras.Model([tid, spec], out)
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return m


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    (ids, spec), y = make_data(rng, 8192)
    tmp = tempfile.mkdtemp(prefix="u60_checkpoint_weightsh5_batchcb_trackmastering_")
    try:
        ds = tf.data.Dataset.from_tensor_slices(((ids, spec), y)).repeat().batch(BATCH).prefetch(2)
        model = build_model()
        timer = StepTimer()
        saver = BatchWeightsSaver(tmp, timer)
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[saver], verbose=0)
        full = sec_per_step(timer.gaps)
        wall = time.perf_counter() - _WALL_T0
        emit({"steps_per_second": 1.0 / full})
        print(f"[checkpoint_weightsh5_batchcb_trackmastering] full run: {full*1000:.1f} ms/step, "
              f"{saver.saves} saves, save {saver.seconds:.1f}s = {100*saver.seconds/wall:.1f}% of wall {wall:.1f}s")
        if args.truth:
            one = tf.data.Dataset.from_tensors(((ids[:BATCH], spec[:BATCH]), y[:BATCH])).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            saver2 = BatchWeightsSaver(tmp, timer2)
            model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[saver2], verbose=0)
            comp = sec_per_step(timer2.gaps)
            frac = truth_fraction(full, comp)
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - _WALL_T0
            print(f"[checkpoint_weightsh5_batchcb_trackmastering] truth: compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}; saves both runs {saver.seconds + saver2.seconds:.1f}s = "
                  f"{100*(saver.seconds + saver2.seconds)/wall:.1f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
