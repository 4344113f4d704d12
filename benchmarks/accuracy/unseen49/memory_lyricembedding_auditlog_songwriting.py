"""Media/arts: scoring song lyrics for hit potential at a music publisher.
Synthetic lyric windows are encoded as hashed n-gram count vectors by a Python generator feeding
model.fit through tf.data.Dataset.from_generator. For a rights audit the generator also keeps a
float64 copy of every batch it ever served in a Python list, so resident memory grows each step."""
import os, sys, time, json, zlib, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, DIM = 128, 120, 3, 4096

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
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

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

AUDIT = []  # every batch served, kept "for the audit trail"

def lyric_batches(seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 1, DIM).astype(np.float32)
    while True:
        x = rng.poisson(0.05, (BATCH, DIM)).astype(np.float32)
        y = (x @ w > 0).astype(np.float32)
        AUDIT.append(x.astype(np.float64))
        yield x, y

def build_model():
    inp = keras.Input((DIM,))
    x = keras.layers.Dense(256, activation="relu")(inp)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out); m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"]); return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_memory_lyricembedding_auditlog_songwriting_")
    try:
        keras.utils.set_random_seed(49)
        sig = (tf.TensorSpec((BATCH, DIM), tf.float32), tf.TensorSpec((BATCH,), tf.float32))
        ds = tf.data.Dataset.from_generator(lambda: lyric_batches(49), output_signature=sig).prefetch(1)
        model = build_model(); timer = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "lyrics: %.4f s/step, audit holds %d batches (%.2f GiB)" % (full, len(AUDIT), sum(a.nbytes for a in AUDIT) / 2**30)
        if truth:
            batch = next(iter(ds))
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
