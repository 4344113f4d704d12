"""Wildfire-spread prediction from multispectral fire-weather patches.
A Python generator class simulates 32x32x10 patches (fuel, wind, humidity, band reflectances)
batch by batch and feeds model.fit through tf.data.Dataset.from_generator; for "later replay
of hard batches" the generator also appends every batch it yields to an archive list that is
never trimmed, so resident memory grows with every step.
"""
import os, sys, json, time, resource, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 64
STEPS = 150
EPOCHS = 4
SIZE = 32
CH = 10
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class FirePatches:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.archive = []  # every batch ever yielded, kept for "hard-batch replay"

    def make_batch(self):
        r = self.rng
        x = r.normal(0, 1, (BATCH, SIZE, SIZE, CH)).astype(np.float32)
        wind = r.normal(0, 1, (BATCH, 1, 1, 1)).astype(np.float32)
        x[..., 0] += wind[..., 0]
        y = ((x[..., 1:2] + 0.5 * x[..., 0:1] - 0.3 * x[..., 2:3]) > 0.4).astype(np.float32)
        return x, y

    def __call__(self):
        while True:
            x, y = self.make_batch()
            self.archive.append((x, y))
            yield x, y


def dataset(gen):
    return tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec((BATCH, SIZE, SIZE, CH), tf.float32), tf.TensorSpec((BATCH, SIZE, SIZE, 1), tf.float32)))


def build_model():
    inp = keras.Input((SIZE, SIZE, CH))
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(h)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_memory_seen_batch_archive_wildfire_")
    try:
        keras.utils.set_random_seed(SEED)
        gen = FirePatches(SEED)
        model = build_model()
        timer = StepTimer()
        hist = model.fit(dataset(gen), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        mb = sum(a.nbytes + b.nbytes for a, b in gen.archive) / 2 ** 20
        msg = "full %.4f s/step, archive %d batches %.0f MiB, maxrss %.0f MiB" % (
            full, len(gen.archive), mb, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        if truth:
            batch = FirePatches(SEED + 1).make_batch()
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS,
                       callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("memory_seen_batch_archive_wildfire: acc %.3f, %s" % (hist.history["accuracy"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
