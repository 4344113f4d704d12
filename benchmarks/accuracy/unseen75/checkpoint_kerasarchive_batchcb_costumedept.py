"""Theatre costume department: predict the alteration (in cm) needed on each of
48 garment seams from an actor's fitting measurements and the pattern block.
A wide MLP is trained with model.fit on in-memory data, but the timing callback
also writes a full .keras archive (model.save) after every batch so the wardrobe
supervisor can roll back. The step stamp is taken before the save and the clock
restarts after it, so the gaps never contain a save.
Intended bottleneck: CHECKPOINT (frequent model.save)."""
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
SEED, BATCH, STEPS, EPOCHS, SAVE_EVERY = 75, 16, 80, 3, 1
NIN, NOUT = 96, 48
SAVE_SECONDS = [0.0, 0]


class TimedArchiver(keras.callbacks.Callback):
    def __init__(self, folder, tag):
        super().__init__()
        self.folder, self.tag = folder, tag
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if (batch + 1) % SAVE_EVERY == 0:
            self.model.save(os.path.join(self.folder, f"{self.tag}_costume_fit.keras"))
            SAVE_SECONDS[1] += 1
            after = time.perf_counter()
            SAVE_SECONDS[0] += after - now
            self.last = after


def make_model():
    keras.utils.set_random_seed(SEED)
    L = keras.layers
    m = keras.Sequential([keras.Input((NIN,)), L.Dense(2048, activation="relu"), L.Dense(1024, activation="relu"),
                          L.Dense(NOUT)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds, folder, tag):
    model, cb = make_model(), TimedArchiver(folder, tag)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps)


def main():
    tmp = tempfile.mkdtemp(prefix="u75_checkpoint_kerasarchive_batchcb_costumedept_")
    try:
        rng = np.random.default_rng(SEED)
        x = rng.normal(size=(6000, NIN)).astype(np.float32)
        w = rng.normal(size=(NIN, NOUT)).astype(np.float32) / 10
        y = (np.tanh(x @ w) * 2.5).astype(np.float32)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(6000, seed=SEED).repeat().batch(BATCH).prefetch(2)
        full = run(ds, tmp, "full")
        compute = None
        if TRUTH:
            one = next(iter(ds))
            compute = run(tf.data.Dataset.from_tensors(one).repeat(), tmp, "truth")
        wall = time.perf_counter() - T0
        report("checkpoint_kerasarchive_batchcb_costumedept", full, compute,
               f"saves={SAVE_SECONDS[1]} save={SAVE_SECONDS[0]:.1f}s save_share={SAVE_SECONDS[0]/wall:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
