"""Query spelling-correction ranker for a documentation site's search box.

Misspelled-query / candidate-correction token pairs are generated in memory
and fed to model.fit; the model has a large word-piece embedding table. A
batch callback dumps every weight array with numpy.savez_compressed (a portable
snapshot the serving side can load without TensorFlow) every few batches, and
those compressed dumps dominate the wall time.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 128, 70, 2
SEQ, VOCAB, DIM = 24, 40000, 64
SAVE_EVERY = 2
N = 20000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


class NpzSnapshot(keras.callbacks.Callback):
    """Runs after StepTimer; restarts the step clock after the save so saves stay outside the gaps."""
    def __init__(self, folder, timer):
        super().__init__()
        self.folder, self.timer = folder, timer
        self.seconds, self.count, self.seen = 0.0, 0, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen % SAVE_EVERY:
            return
        t = time.perf_counter()
        arrays = {f"w{i:03d}": w for i, w in enumerate(self.model.get_weights())}
        path = os.path.join(self.folder, f"snapshot_{self.seen:05d}.npz")
        np.savez_compressed(path, **arrays)
        self.count += 1
        self.seconds += time.perf_counter() - t
        self.timer._last = time.perf_counter()


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def build_model():
    keras.utils.set_random_seed(SEED)
    q = keras.Input((SEQ,), dtype="int32", name="query")
    c = keras.Input((SEQ,), dtype="int32", name="candidate")
    emb = keras.layers.Embedding(VOCAB, DIM)
    enc = keras.layers.GlobalAveragePooling1D()
    qv, cv = enc(emb(q)), enc(emb(c))
    x = keras.layers.Concatenate()([qv, cv, qv * cv])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model([q, c], out)
    m.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    return m


def train(ds, folder):
    model = build_model()
    timer = StepTimer()
    snap = NpzSnapshot(folder, timer)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, snap], verbose=0)
    return timer.sec_per_step(), snap


def main():
    tmp = tempfile.mkdtemp(prefix="u53_checkpoint_savezcompressed_batchcb_spellcorrector_")
    try:
        rng = np.random.default_rng(SEED)
        q = rng.integers(1, VOCAB, (N, SEQ)).astype(np.int32)
        c = q.copy()
        y = rng.integers(0, 2, N).astype(np.float32)
        noise = rng.integers(1, VOCAB, (N, SEQ)).astype(np.int32)
        c[y == 0] = noise[y == 0]
        ds = tf.data.Dataset.from_tensor_slices(((q, c), y)).shuffle(N, seed=SEED).repeat().batch(BATCH).prefetch(2)
        os.makedirs(os.path.join(tmp, "run"))
        full, snap = train(ds, os.path.join(tmp, "run"))
        wall = time.perf_counter() - T0
        emit("steps_per_second", 1.0 / full)
        msg = (f"full {full * 1000:.1f} ms/step, {snap.count} snapshots, "
               f"saving {snap.seconds:.1f} s of {wall:.1f} s ({100 * snap.seconds / wall:.0f}%)")
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            os.makedirs(os.path.join(tmp, "truth"))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"))
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"checkpoint_savezcompressed_batchcb_spellcorrector: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
