import time; T0 = time.perf_counter()
import json
import os
import sys
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


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps never cross epochs."""

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

# Mite-board monitoring dashboard: a model scores alcohol-wash / sugar-roll
# mite loads from colony features.  To draw "how the model evolved" plots for
# the club newsletter, a callback snapshots every layer's weights plus the
# scores on a fixed probe set after every batch and appends them to a list
# that is never trimmed, so host memory climbs for the whole run.

N_ROWS = 32768
N_FEAT = 64
BATCH = 128
STEPS = 95
EPOCHS = 2
HIDDEN = 896
PROBE = 4096


def colonies(rng):
    x = rng.normal(0.0, 1.0, (N_ROWS, N_FEAT)).astype(np.float32)
    mites = np.exp(0.6 * x[:, 0] + 0.4 * x[:, 1] - 0.3 * x[:, 2] + 1.0)
    y = (mites + rng.normal(0, 0.3, N_ROWS)).astype(np.float32)
    return x, y[:, None]


class EvolutionStash(keras.callbacks.Callback):
    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        snapshot = [w.copy() for w in self.model.get_weights()]
        scores = self.model(self.probe, training=False).numpy()
        self.history.append((snapshot, scores))


def build_model():
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


X, Y = colonies(np.random.default_rng(87))
probe = tf.constant(X[:PROBE])
ds = (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(8192, seed=87)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))

keras.utils.set_random_seed(87)
timer = StepTimer()
stash = EvolutionStash(probe)
model = build_model()
model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, stash], verbose=0)
full = seconds_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
print(f"[miteboard] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"{len(stash.history)} snapshots, RSS {rss_mib():.0f} MiB, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    one = tf.data.Dataset.from_tensors((X[:BATCH], Y[:BATCH])).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    stash2 = EvolutionStash(probe)
    model2 = build_model()
    model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2, stash2],
               verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[miteboard] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, RSS {rss_mib():.0f} MiB")
