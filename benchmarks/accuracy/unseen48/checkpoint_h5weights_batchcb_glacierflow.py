"""Glacier surface-velocity emulator: predict next-season flow speed on a 2,048-node
flowline from the current speed, thickness and surface-mass-balance profiles. Profiles are
generated in memory and fed to a wide dense emulator through model.fit; a field-team rule
saves the full model weights to a .weights.h5 file after every batch so a crashed remote
run can resume, and those saves dominate the run."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, NODES, BATCH, STEPS, EPOCHS, N, SAVE_EVERY = 48, 2048, 16, 100, 3, 4096, 1


class StepTimer(keras.callbacks.Callback):
    """Tail of the bracket: records the end of each step after the save callbacks ran."""
    def __init__(self, head):
        super().__init__(); self.head = head; self.gaps = []
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.head.prev_end is not None:
            self.gaps.append(t - self.head.prev_end - self.head.save_time)
        self.head.prev_end = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class StepHead(keras.callbacks.Callback):
    """Head of the bracket: resets the epoch so gaps stay within an epoch."""
    def __init__(self):
        super().__init__(); self.prev_end = None; self.save_time = 0.0
    def on_epoch_begin(self, epoch, logs=None):
        self.prev_end = None


class ResumableWeights(keras.callbacks.Callback):
    def __init__(self, folder, head, every):
        super().__init__()
        self.folder, self.head, self.every = folder, head, every
        self.total_save = 0.0; self.n_saves = 0; self.seen = 0
    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        self.head.save_time = 0.0
        if self.seen % self.every == 0:
            t = time.perf_counter()
            self.model.save_weights(os.path.join(self.folder, f"flowline_{self.n_saves % 3}.weights.h5"))
            dt = time.perf_counter() - t
            self.head.save_time = dt
            self.total_save += dt; self.n_saves += 1


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_profiles():
    rng = np.random.default_rng(SEED)
    s = np.linspace(0, 1, NODES, dtype=np.float32)
    thick = (400 * np.sqrt(np.clip(1 - s, 0, 1)))[None] * rng.uniform(0.7, 1.3, (N, 1))
    smb = (2 - 5 * s)[None] + rng.normal(0, 0.3, (N, 1))
    speed = 1e-4 * thick ** 2 * (1 + 0.1 * rng.standard_normal((N, NODES)))
    nxt = speed * (1 + 0.05 * smb) + rng.normal(0, 1, (N, NODES))
    x = np.concatenate([speed / 20, thick / 400, smb], 1).astype(np.float32)
    return x, (nxt / 20).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((3 * NODES,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(NODES)])
    m.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9), loss="mse")
    return m


def fit(model, data, folder, steps_per_epoch=None):
    head = StepHead()
    timer = StepTimer(head)
    saver = ResumableWeights(folder, head, SAVE_EVERY)
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=steps_per_epoch, callbacks=[head, saver, timer], verbose=0)
    return timer.sec_per_step(), saver, time.perf_counter() - t, hist


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_checkpoint_h5weights_batchcb_glacierflow_")
    try:
        x, y = make_profiles()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=SEED).repeat().batch(BATCH)
        full, saver, fit_wall, hist = fit(build_model(), ds, tmp, STEPS)
        emit("steps_per_second", 1.0 / full)
        main_wall = time.perf_counter() - T0
        msg = (f"glacier flow: loss={hist.history['loss'][-1]:.4f} step={full*1000:.1f}ms saves={saver.n_saves} "
               f"save_time={saver.total_save:.1f}s fit={fit_wall:.1f}s main_wall={main_wall:.1f}s save_share={saver.total_save/main_wall:.2f}")
        if truth:
            batch = next(iter(ds))
            comp, _, _, _ = fit(build_model(), tf.data.Dataset.from_tensors(batch).repeat(), tmp, STEPS)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
