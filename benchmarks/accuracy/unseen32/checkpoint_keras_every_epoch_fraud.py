import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Insurance-claim fraud: a wide MLP trained in very short epochs, with a ModelCheckpoint
# writing a full .keras archive every epoch plus a BackupAndRestore callback saving every 5 batches.
BATCH, STEPS, EPOCHS, FEAT = 64, 10, 12, 128


def build_model():
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(2048, activation="relu")(inp)
    h = keras.layers.Dense(1024, activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h))
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds, tmp, tag, timer):
    cbs = [timer,
           keras.callbacks.ModelCheckpoint(os.path.join(tmp, tag + "_ep{epoch:03d}.keras")),
           keras.callbacks.BackupAndRestore(os.path.join(tmp, tag + "_backup"), save_freq=5,
                                            delete_checkpoint=True)]
    build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=cbs, verbose=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u32_checkpoint_keras_every_epoch_fraud_")
    try:
        rng = np.random.default_rng(32)
        x = rng.standard_normal((8192, FEAT)).astype(np.float32)
        y = (x[:, :3].sum(axis=1) > 1.5).astype(np.float32)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().prefetch(2)
        t0 = time.perf_counter()
        timer = StepTimer()
        run(ds, tmp, "full", timer)
        full = timer.sec_per_step()
        wall1 = time.perf_counter() - t0
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full*1000:.1f} ms/step, train-step share {STEPS*EPOCHS*full/wall1:.2f}"
        if args.truth:
            batch = next(iter(ds))
            timer2 = StepTimer()
            run(tf.data.Dataset.from_tensors(batch).repeat(), tmp, "fixed", timer2)
            comp = timer2.sec_per_step()
            f = truth_fraction(full, comp)
            emit("truth_input_fraction", f)
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
        print(f"checkpoint_keras_every_epoch_fraud: {msg}, wall {time.perf_counter()-t0:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
