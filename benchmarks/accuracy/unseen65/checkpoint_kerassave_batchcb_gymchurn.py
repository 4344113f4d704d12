"""Gym memberships: churn classifier with member/club embeddings; a batch callback writes a full
.keras archive (weights + optimizer state) with model.save every few batches.

Bottleneck (checkpoint): the model is cheap to train (the 280k x 64 member-profile table is frozen),
but that table makes every archive ~69 MB, and the archive is rewritten every SAVE_EVERY batches.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6511
MEMBERS = 280000
CLUBS = 400
EMB = 64
N = 16384
BATCH = 256
EPOCHS = 3
STEPS = 30
SAVE_EVERY = 2


class TimedArchiveSaver(keras.callbacks.Callback):
    """Stamp first, then save, then restart the clock so the step gaps never include the save."""

    def __init__(self, path, every):
        super().__init__()
        self.path, self.every = path, every
        self.gaps, self.last, self.save_seconds, self.saves = [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if (batch + 1) % self.every == 0:
            self.model.save(self.path, overwrite=True)
            self.saves += 1
            end = time.perf_counter()
            self.save_seconds += end - now
            self.last = end

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def make_data(rng):
    member = rng.integers(0, MEMBERS, N).astype(np.int32)
    club = rng.integers(0, CLUBS, N).astype(np.int32)
    visits = rng.poisson(6, (N, 12)).astype(np.float32) / 10.0
    y = ((visits[:, -3:].mean(axis=1) < 0.5) ^ (club % 7 == 0)).astype(np.float32)[:, None]
    return {"member": member, "club": club, "visits": visits}, y


def build_model():
    m_in = keras.Input((), dtype="int32", name="member")
    c_in = keras.Input((), dtype="int32", name="club")
    v_in = keras.Input((12,), name="visits")
    # frozen member-profile table (pretrained elsewhere); it is not trained but is written into every archive
    m = keras.layers.Embedding(MEMBERS, EMB, trainable=False, name="member_profile")(m_in)
    c = keras.layers.Embedding(CLUBS, 8)(c_in)
    x = keras.layers.Concatenate()([m, c, v_in])
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model([m_in, c_in, v_in], out)
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def run(ds, tmp, tag):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    saver = TimedArchiveSaver(os.path.join(tmp, f"gymchurn_{tag}.keras"), SAVE_EVERY)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0)
    return saver


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u65_checkpoint_kerassave_batchcb_gymchurn_")
    try:
        x, y = make_data(np.random.default_rng(SEED))
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=SEED).repeat().batch(BATCH)
        s1 = run(ds, tmp, "full")
        full = s1.sec_per_step()
        wall = time.perf_counter() - _T0
        emit({"steps_per_second": 1.0 / full})
        mb = os.path.getsize(os.path.join(tmp, "gymchurn_full.keras")) / 2 ** 20
        print(f"[gymchurn] fit {full * 1000:.1f} ms/step; {s1.saves} saves of {mb:.0f} MB took "
              f"{s1.save_seconds:.1f}s of {wall:.1f}s wall = {100 * s1.save_seconds / wall:.0f}%")
        if args.truth:
            xb = {k: v[:BATCH] for k, v in x.items()}
            one = tf.data.Dataset.from_tensors((xb, y[:BATCH])).repeat()
            s2 = run(one, tmp, "truth")
            comp = s2.sec_per_step()
            frac = truth_fraction(full, comp)
            emit({"truth_input_fraction": frac})
            total = time.perf_counter() - _T0
            print(f"[gymchurn] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
                  f"input fraction {frac:.3f}; saves {s1.save_seconds + s2.save_seconds:.1f}s of "
                  f"{total:.1f}s total wall = {100 * (s1.save_seconds + s2.save_seconds) / total:.0f}%")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
