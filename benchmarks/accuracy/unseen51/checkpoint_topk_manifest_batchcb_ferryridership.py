"""Ferry ridership forecasting: hourly boardings for a set of terminals (weather,
holidays, sailing schedule) are generated in memory and a dense forecaster trains with
model.fit; a batch-level callback keeps the three best full .keras checkpoints by
running loss: after every batch it saves a candidate .keras file, deletes the worst one
and rewrites a JSON manifest.
"""
import json
import os
import shutil
import sys
import tempfile
import time

T_PROC = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 128
STEPS = 80
EPOCHS = 2
FEAT = 40
EVERY = 1
TOPK = 3


class StepTimer(keras.callbacks.Callback):
    """Step gaps that exclude the checkpoint work done by TopKSaver in the same hook."""

    def __init__(self):
        super().__init__()
        self.gaps, self.last, self.saving = [], None, 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def after_saves(self):
        # called by the tail callback: restart the clock after the save work
        if self.last is not None:
            t = time.perf_counter()
            self.saving += t - self.last
            self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class TopKSaver(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder, self.kept, self.n_saves = folder, [], 0

    def on_train_batch_end(self, batch, logs=None):
        if batch % EVERY:
            return
        loss = float(logs["loss"])
        path = os.path.join(self.folder, f"ferry_b{self.n_saves:04d}.keras")
        self.model.save(path)  # save the candidate, then prune to the best TOPK
        self.n_saves += 1
        self.kept.append((loss, path))
        self.kept.sort()
        while len(self.kept) > TOPK:
            os.remove(self.kept.pop()[1])
        with open(os.path.join(self.folder, "manifest.json"), "w") as fh:
            json.dump([{"loss": l, "path": p} for l, p in self.kept], fh)


class Tail(keras.callbacks.Callback):
    def __init__(self, timer):
        super().__init__()
        self.timer = timer

    def on_train_batch_end(self, batch, logs=None):
        self.timer.after_saves()


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def build_model():
    m = keras.Sequential([keras.Input((FEAT,))] +
                         [keras.layers.Dense(u, activation="relu") for u in (1024, 1024, 1024, 512)] +
                         [keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def run(ds_or_xy, folder, **kw):
    tf.random.set_seed(51)
    model = build_model()
    timer = StepTimer()
    saver = TopKSaver(folder)
    cbs = [timer, saver, Tail(timer)]
    if isinstance(ds_or_xy, tuple):
        model.fit(*ds_or_xy, batch_size=BATCH, epochs=EPOCHS, callbacks=cbs, verbose=0, **kw)
    else:
        model.fit(ds_or_xy, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=cbs, verbose=0)
    return timer, saver


def main():
    tmp = tempfile.mkdtemp(prefix="u51_checkpoint_topk_manifest_batchcb_ferryridership_")
    try:
        rng = np.random.default_rng(51)
        x = rng.normal(0, 1, (BATCH * STEPS, FEAT)).astype(np.float32)
        y = (3 * x[:, 0] + np.sin(x[:, 1] * 2) + 0.5 * x[:, 2] * x[:, 3] + rng.normal(0, 0.1, len(x)))
        y = y.astype(np.float32)[:, None]
        t0 = time.perf_counter()
        os.makedirs(os.path.join(tmp, "run1"))
        timer, saver = run((x, y), os.path.join(tmp, "run1"), shuffle=True)
        fit_s = time.perf_counter() - t0
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        saving = timer.saving
        if "--truth" in sys.argv:
            os.makedirs(os.path.join(tmp, "run2"))
            timer2, _ = run(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), os.path.join(tmp, "run2"))
            comp = timer2.sec_per_step()
            saving += timer2.saving
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        wall = time.perf_counter() - T_PROC
        print(f"ferry forecaster: {STEPS*EPOCHS} steps, {saver.n_saves} .keras saves, first fit {fit_s:.1f}s, "
              f"all saving {saving:.1f}s of {wall:.1f}s since imports ({100*saving/wall:.0f}%)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
