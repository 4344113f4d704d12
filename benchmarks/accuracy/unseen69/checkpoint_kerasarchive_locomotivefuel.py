"""Locomotive fuel-consumption regression per (locomotive, track segment, notch).

Input: in-memory categorical ids + trip features via tf.data (cheap); the model
has large embedding tables (locomotive x segment vocabulary). Bottleneck: a
single StepTimerAndArchive callback writes a full model.save(".keras") archive
(weights + optimizer slots) every SAVE_EVERY batches. The step stamp is taken
before the save and the clock restarts after it, so timed gaps exclude saves.
Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os, shutil, tempfile
import numpy as np
import tensorflow as tf
import keras

VOCAB = 100000
EMB = 64
F = 16
N = 20000
BATCH = 128
STEPS = 35
EPOCHS = 3
SAVE_EVERY = 1


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make(rng):
    ids = rng.integers(0, VOCAB, (N, 2)).astype(np.int32)
    feats = rng.normal(0, 1, (N, F)).astype(np.float32)
    y = (feats[:, 0] * 0.7 + np.sin(ids[:, 0] % 97) * 0.3 + 0.1 * (ids[:, 1] % 13)).astype(np.float32)[:, None]
    return ids, feats, y


def build_model():
    ids = keras.Input((2,), dtype="int32"); fx = keras.Input((F,))
    e = keras.layers.Embedding(VOCAB, EMB)(ids)
    h = keras.layers.Concatenate()([keras.layers.Flatten()(e), fx])
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    m = keras.Model([ids, fx], keras.layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


class StepTimerAndArchive(keras.callbacks.Callback):
    def __init__(self, path):
        super().__init__(); self.path = path; self.gaps = []; self.last = None
        self.save_seconds = 0.0; self.saves = 0; self.step = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        self.step += 1
        if self.step % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(self.path)
            self.save_seconds += time.perf_counter() - t; self.saves += 1
            self.last = time.perf_counter()
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    tmp = tempfile.mkdtemp(prefix="u69_checkpoint_kerasarchive_locomotivefuel_")
    try:
        ids, feats, y = make(np.random.default_rng(69))
        ds = (tf.data.Dataset.from_tensor_slices(((ids, feats), y)).shuffle(N, seed=69)
              .batch(BATCH).repeat().prefetch(2))
        cb = StepTimerAndArchive(os.path.join(tmp, "loco_fuel.keras")); model = build_model()
        model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
        full = cb.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - _T0
        print(f"[kerasarchive] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, {cb.saves} saves "
              f"{cb.save_seconds:.1f}s = {100*cb.save_seconds/wall:.1f}% of wall {wall:.1f}s")
        if args.truth:
            tds = tf.data.Dataset.from_tensors(((ids[:BATCH], feats[:BATCH]), y[:BATCH])).repeat()
            cb2 = StepTimerAndArchive(os.path.join(tmp, "loco_fuel_truth.keras")); m2 = build_model()
            m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb2], verbose=0)
            comp = cb2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            wall = time.perf_counter() - _T0
            tot = cb.save_seconds + cb2.save_seconds
            print(f"[kerasarchive] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, saves "
                  f"{tot:.1f}s = {100*tot/wall:.1f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
