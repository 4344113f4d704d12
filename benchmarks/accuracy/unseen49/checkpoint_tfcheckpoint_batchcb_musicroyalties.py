"""Business/music: forecasting quarterly royalty payouts per track for a publishing house.
In-memory synthetic track features (catalogue id embeddings, territory mix, stream counts) feed a
short model.fit; because the finance team wants to resume from any point, a callback writes a
tf.train.Checkpoint of the model and optimizer every few batches, which dominates the wall time."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T_START = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N, N_TRACKS, EMB, SAVE_EVERY = 256, 40, 2, 20480, 200000, 96, 1

class StepHead(keras.callbacks.Callback):
    """First callback: marks the end of each training step."""
    def __init__(self):
        super().__init__(); self.gaps = []; self.prev = None
    def on_epoch_begin(self, epoch, logs=None):
        self.prev = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.prev is not None:
            self.gaps.append(t - self.prev)
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

class StepTail(keras.callbacks.Callback):
    """Last callback: restarts the step clock after any saving callbacks have run."""
    def __init__(self, head):
        super().__init__(); self.head = head
    def on_train_batch_end(self, batch, logs=None):
        self.head.prev = time.perf_counter()

class ResumableCheckpoint(keras.callbacks.Callback):
    def __init__(self, folder, every):
        super().__init__(); self.folder, self.every = folder, every; self.seconds = 0.0; self.n = 0; self.ckpt = None
    def on_train_batch_end(self, batch, logs=None):
        if batch % self.every:
            return
        t = time.perf_counter()
        if self.ckpt is None:
            self.ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.ckpt.write(os.path.join(self.folder, "royalty_step"))
        self.n += 1; self.seconds += time.perf_counter() - t

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def build_model():
    tid = keras.Input((1,), dtype="int32"); num = keras.Input((24,))
    e = keras.layers.Flatten()(keras.layers.Embedding(N_TRACKS, EMB)(tid))
    x = keras.layers.Concatenate()([e, num])
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model([tid, num], out); m.compile(optimizer="adam", loss="huber"); return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_checkpoint_tfcheckpoint_batchcb_musicroyalties_")
    try:
        rng = np.random.default_rng(49); keras.utils.set_random_seed(49)
        tid = rng.integers(0, N_TRACKS, (N, 1)).astype(np.int32)
        num = rng.normal(size=(N, 24)).astype(np.float32)
        y = (np.log1p(np.exp(num[:, :4].sum(1))) + (tid[:, 0] % 7) * 0.1).astype(np.float32)
        ds = tf.data.Dataset.from_tensor_slices(((tid, num), y)).shuffle(N, seed=2).repeat().batch(BATCH)

        def run(data, sub):
            model = build_model(); head = StepHead(); ck = ResumableCheckpoint(os.path.join(tmp, sub), SAVE_EVERY)
            model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[head, ck, StepTail(head)], verbose=0)
            return head.sec_per_step(), ck

        full, ck = run(ds, "full")
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T_START
        msg = "royalty ckpt: %.4f s/step, %d saves %.1fs of %.1fs (%.0f%%)" % (full, ck.n, ck.seconds, wall, 100 * ck.seconds / wall)
        if truth:
            batch = next(iter(ds))
            comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat(), "truth")
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
