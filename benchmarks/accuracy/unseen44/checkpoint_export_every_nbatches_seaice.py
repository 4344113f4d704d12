"""Sea-ice concentration nowcasting from passive-microwave swaths for an Arctic shipping desk.
Brightness-temperature patches (in-memory numpy, simulated once) train a small CNN with
model.fit; an operations callback exports a serving SavedModel (model.export) after every batch
so the routing service can hot-swap the newest model, and the exports dominate the run.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 32
STEPS = 35
EPOCHS = 3
EVERY = 1
SIZE = 32
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepHead(keras.callbacks.Callback):
    """First callback: marks the end of the step; gap runs from the previous StepTail mark."""

    def __init__(self):
        super().__init__()
        self.gaps, self.mark = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.mark = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.mark is not None:
            self.gaps.append(now - self.mark)

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class StepTail(keras.callbacks.Callback):
    def __init__(self, head):
        super().__init__()
        self.head = head

    def on_train_batch_end(self, batch, logs=None):
        self.head.mark = time.perf_counter()


class ExportEveryN(keras.callbacks.Callback):
    def __init__(self, root, every):
        super().__init__()
        self.root, self.every, self.count, self.seconds = root, every, 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            t = time.perf_counter()
            path = os.path.join(self.root, "serving_%04d" % self.count)
            self.model.export(path, verbose=False)
            self.count += 1
            self.seconds += time.perf_counter() - t


def simulate_swaths(n, rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    x = np.empty((n, SIZE, SIZE, 4), np.float32)
    y = np.empty((n, SIZE, SIZE, 1), np.float32)
    for i in range(n):
        edge = 0.5 + 0.3 * np.sin(2 * np.pi * (xx * rng.random() + rng.random())) + 0.1 * rng.normal()
        conc = 1 / (1 + np.exp(-(yy - edge) * 20))
        y[i, ..., 0] = conc
        for c, (tw, ti) in enumerate(((160, 250), (200, 255), (180, 240), (220, 260))):
            x[i, ..., c] = (tw + (ti - tw) * conc + rng.normal(0, 3, (SIZE, SIZE)) - 200) / 40
    return x, y


def build_model():
    inp = keras.Input((SIZE, SIZE, 4))
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["mae"])
    return m


def run(ds_or_x, y, root, fixed):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    head = StepHead()
    exp = ExportEveryN(root, EVERY)
    cbs = [head, exp, StepTail(head)]
    t0 = time.perf_counter()
    if fixed:
        h = model.fit(ds_or_x, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=cbs, verbose=0)
    else:
        h = model.fit(ds_or_x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=cbs, verbose=0)
    return head.sec_per_step(), exp, time.perf_counter() - t0, h


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_checkpoint_export_every_nbatches_seaice_")
    try:
        x, y = simulate_swaths(BATCH * STEPS, np.random.default_rng(SEED))
        full, exp, fit_s, h = run(x, y, os.path.join(tmp, "run"), False)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step, %d exports %.1f of %.1f s fit" % (full, exp.count, exp.seconds, fit_s)
        if truth:
            ds = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            comp, _, _, _ = run(ds, None, os.path.join(tmp, "truth"), True)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("checkpoint_export_every_nbatches_seaice: mae %.4f, %s" % (h.history["mae"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
