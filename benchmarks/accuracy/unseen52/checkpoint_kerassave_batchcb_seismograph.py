"""Earthquake phase picking on three-component seismograph traces.
In-memory waveform windows train a small CNN with model.fit; an operations requirement saves the
full .keras model every 3 batches so a preempted job can resume, and these saves dominate wall
time. Head/tail callbacks bracket the save so the step timer excludes it."""
import os, sys, json, time, struct, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each batch end; gaps only within an epoch."""
    def on_train_begin(self, logs=None):
        self.gaps = []
        self.t = None
    def on_epoch_begin(self, epoch, logs=None):
        self.t = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.t is not None:
            self.gaps.append(now - self.t)
        self.t = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

NAME = "checkpoint_kerassave_batchcb_seismograph"
T, B, STEPS, EPOCHS, EVERY = 400, 32, 50, 2, 1


class Head(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.start = None
    def on_epoch_begin(self, epoch, logs=None):
        self.start = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.start is not None:
            self.gaps.append(now - self.start)


class Tail(keras.callbacks.Callback):
    def __init__(self, head):
        super().__init__(); self.head = head
    def on_train_batch_end(self, batch, logs=None):
        self.head.start = time.perf_counter()


class Saver(keras.callbacks.Callback):
    def __init__(self, d):
        super().__init__(); self.d = d; self.n = 0; self.secs = 0.0
    def on_train_batch_end(self, batch, logs=None):
        if batch % EVERY == 0:
            s = time.perf_counter()
            self.model.save(os.path.join(self.d, "resume_%d.keras" % (self.n % 2)))
            self.n += 1; self.secs += time.perf_counter() - s


def make_model():
    keras.utils.set_random_seed(0)
    m = keras.Sequential([keras.Input((T, 3))] + [l for f in (64, 64, 128, 128) for l in (
        keras.layers.Conv1D(f, 7, padding="same", activation="relu"), keras.layers.MaxPooling1D(2))]
        + [keras.layers.Flatten(), keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(3, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    rng = np.random.default_rng(0)
    n = B * STEPS
    X = rng.standard_normal((n, T, 3)).astype(np.float32)
    Y = rng.integers(0, 3, n).astype(np.int32)
    t0 = time.perf_counter()
    head = Head(); sv = Saver(tmp)
    make_model().fit(X, Y, batch_size=B, epochs=EPOCHS, callbacks=[head, sv, Tail(head)], verbose=0)
    full = sec_per_step(head.gaps)
    emit({"steps_per_second": 1.0 / full})
    msg = "%s: saves=%d save_s=%.1f %.1f steps/s" % (NAME, sv.n, sv.secs, 1.0 / full)
    if TRUTH:
        h2 = Head()
        ds = tf.data.Dataset.from_tensors((X[:B], Y[:B])).repeat()
        make_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[h2, Saver(tmp), Tail(h2)], verbose=0)
        Fr = truth_fraction(full, sec_per_step(h2.gaps))
        emit({"truth_input_fraction": Fr})
        msg += " truth=%.3f" % Fr
    print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
