"""Keyword spotting for a smart-speaker fleet: log-mel patches of spoken commands
are synthesised in memory and a CNN with a wide dense head is trained with model.fit.
Because the jobs run on pre-emptible machines, the team added
keras.callbacks.BackupAndRestore with a small save_freq, so weights and training
state are written to the backup directory after every batch.
"""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
FRAMES, MELS = 64, 40
N = 512
N_CLASSES = 10
BATCH = 16
EPOCHS = 5
SAVE_FREQ = 1


class StepHead(keras.callbacks.Callback):
    """Placed first: time the end of the step itself, before other callbacks."""
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.head_time = self.tail_time = None

    def on_epoch_begin(self, epoch, logs=None):
        self.tail_time = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.tail_time is not None:
            self.gaps.append(t - self.tail_time)
        self.head_time = t

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class StepTail(keras.callbacks.Callback):
    """Placed last: marks when the save callback has finished."""
    def __init__(self, head):
        super().__init__()
        self.head, self.save_seconds = head, 0.0

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        self.save_seconds += t - self.head.head_time
        self.head.tail_time = t


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_commands():
    rng = np.random.default_rng(SEED)
    y = rng.integers(0, N_CLASSES, N).astype(np.int32)
    t = np.arange(FRAMES)[:, None]
    m = np.arange(MELS)[None, :]
    x = np.empty((N, FRAMES, MELS, 1), np.float32)
    for i in range(N):
        c = y[i]
        formant = 5 + 3 * c + 2 * np.sin(t / (4 + c))
        x[i, ..., 0] = np.exp(-((m - formant) ** 2) / 8.0) * (np.abs(t - 32) < 20) + 0.3 * rng.normal(size=(FRAMES, MELS))
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FRAMES, MELS, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dropout(0.3)(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(data, backup_dir, **fit_kw):
    head = StepHead()
    tail = StepTail(head)
    backup = keras.callbacks.BackupAndRestore(backup_dir, save_freq=SAVE_FREQ)
    model = build_model()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[head, backup, tail], verbose=0, **fit_kw).history
    return head, tail, time.perf_counter() - t, hist


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_checkpoint_backuprestore_keywordspotting_")
    try:
        x, y = make_commands()
        head, tail, fit_wall, hist = train(x, os.path.join(tmp, "backup_a"), y=y, batch_size=BATCH, shuffle=True)
        full = head.seconds_per_step()
        append_out({"steps_per_second": 1.0 / full})
        msg = (f"keyword backup: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}, "
               f"backup saves {tail.save_seconds:.1f} s of {fit_wall:.1f} s fit")
        if truth:
            batch = (x[:BATCH], y[:BATCH])
            chead, _, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "backup_b"),
                                   steps_per_epoch=N // BATCH)
            comp = chead.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
