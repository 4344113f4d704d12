import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Botanic-garden pollen traps: each trap uploads a base64-encoded text shard of
# hourly grain counts. tf.data interleaves shards; each shard is decoded and
# parsed by a tf.py_function (base64 -> text -> floats -> log/rolling features)
# before batching into model.fit.
import base64

BATCH = 64
STEPS = 170
EPOCHS = 3
N_SHARDS = 64
PER_SHARD = 128
HOURS = 192
CLASSES = 4  # dominant taxon

rng = np.random.default_rng(78)
SHARDS = []
SHARD_Y = []
for s in range(N_SHARDS):
    y = rng.integers(CLASSES, size=PER_SHARD).astype(np.int32)
    rows = []
    for k in range(PER_SHARD):
        counts = rng.poisson(5 + 3 * y[k], HOURS)
        rows.append(f"trap{s:03d} {k:04d} " + " ".join(str(c) for c in counts))
    SHARDS.append(base64.b64encode("\n".join(rows).encode()).decode())
    SHARD_Y.append(y)
SHARDS = np.array(SHARDS)
SHARD_Y = np.stack(SHARD_Y)


def load_shard(i):
    i = int(i)
    text = base64.b64decode(SHARDS[i]).decode()
    feats = []
    for line in text.split("\n"):
        parts = line.split(" ")
        cl = [int(t) for t in parts[2:]]
        # trap QC: replace isolated spikes (insect hits, wet slides) by the local median
        for h in range(2, len(cl) - 2):
            win = sorted(cl[h - 2:h + 3])
            if cl[h] > 3 * win[2] + 5:
                cl[h] = win[2]
        c = np.array(cl, np.float32)
        lc = np.log1p(c)
        roll = np.convolve(lc, np.ones(6, np.float32) / 6, mode="same")
        feats.append(np.concatenate([lc - lc.mean(), roll - roll.mean()]))
    return np.stack(feats).astype(np.float32), SHARD_Y[i]


def shard_ds(i):
    x, y = tf.py_function(load_shard, [i], [tf.float32, tf.int32])
    x.set_shape((PER_SHARD, 2 * HOURS))
    y.set_shape((PER_SHARD,))
    return tf.data.Dataset.from_tensor_slices((x, y))


def full_ds():
    ds = tf.data.Dataset.range(N_SHARDS).shuffle(N_SHARDS, seed=78).repeat()
    ds = ds.interleave(shard_ds, cycle_length=4, block_length=16)
    return ds.batch(BATCH)


def build():
    m = keras.Sequential([keras.Input((2 * HOURS,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


full = run(full_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[input_interleave_pollentrap] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_interleave_pollentrap] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
