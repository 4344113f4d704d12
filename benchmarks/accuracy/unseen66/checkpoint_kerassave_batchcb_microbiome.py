"""Biology: gut-microbiome disease-state classifier over OTU relative
abundances (CLR transformed, in memory). A custom batch callback saves the full
model (.keras archive, weights + optimizer state) every few batches.
Deliberate bottleneck: checkpointing."""
import os, sys, time, json, tempfile, shutil
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, NOTU, SAVE_EVERY = 8, 27, 2, 3000, 1


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class TimedSaver(keras.callbacks.Callback):
    """Times steps and saves: stamp first, then save, then restart the clock."""
    def __init__(self, folder):
        super().__init__(); self.folder = folder; self.gaps = []; self.last = None
        self.save_secs = 0.0; self.n = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            self.model.save(os.path.join(self.folder, f"ckpt_{self.n % 3}.keras"))
            self.n += 1
            t2 = time.perf_counter()
            self.save_secs += t2 - t
            self.last = t2
        else:
            self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_data(n, seed=66):
    rng = np.random.default_rng(seed)
    counts = rng.gamma(0.3, 1.0, (n, NOTU)) + 1e-3
    y = rng.integers(0, 2, n).astype(np.float32)
    counts[y == 1, :50] *= 3.0
    rel = counts / counts.sum(1, keepdims=True)
    clr = np.log(rel) - np.log(rel).mean(1, keepdims=True)
    return clr.astype(np.float32), y


def build_model():
    m = keras.Sequential([keras.Input((NOTU,)), keras.layers.Dense(2560, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds, folder):
    keras.utils.set_random_seed(66)
    m = build_model()
    cb = TimedSaver(folder)
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return cb.sec_per_step(), cb


def main():
    tmp = tempfile.mkdtemp(prefix="u66_checkpoint_kerassave_batchcb_microbiome_")
    try:
        x, y = make_data(BATCH * STEPS)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=66).repeat().batch(BATCH).prefetch(2)
        full, cb = run(ds, tmp)
        emit({"steps_per_second": 1.0 / full})
        saves, nsave = cb.save_secs, cb.n
        wall = time.perf_counter() - T0
        msg = f"[checkpoint_kerassave_batchcb_microbiome] full {full*1000:.1f} ms/step saves {nsave} ({saves:.1f}s = {100*saves/wall:.0f}% of wall)"
        if TRUTH:
            comp, cb2 = run(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), tmp)
            saves += cb2.save_secs
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
        wall = time.perf_counter() - T0
        print(msg + f" | total save {saves:.1f}s = {100*saves/wall:.0f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
