"""Mobile-game telemetry: predict whether a play session is followed by churn.

Raw client events (player, timestamp, event type, value) arrive as unsorted
per-shard lists, as a telemetry collector would write them. tf.data
interleaves one from_generator pipeline per shard; each generator sorts its
shard by player and time, cuts play sessions on 30-minute inactivity gaps,
and emits the session's event-type sequence plus aggregate features for a
Conv1D/embedding model trained with model.fit.
"""
import os
import sys
import json
import time
import random
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 128
STEPS = 95
EPOCHS = 3
N_SHARDS = 8
PLAYERS_PER_SHARD = 100
SEQ = 64
N_EVENTS = 40
N_AGG = 24
GAP = 1800.0


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_shards(seed):
    rng = random.Random(seed)
    shards = []
    for s in range(N_SHARDS):
        events = []
        for p in range(PLAYERS_PER_SHARD):
            pid = "p%06d" % (s * PLAYERS_PER_SHARD + p)
            t = 1.7e9 + rng.uniform(0, 86400)
            skill = rng.random()
            for _ in range(rng.randint(5, 14)):          # sessions
                t += rng.uniform(2 * GAP, 20 * GAP)
                for _ in range(rng.randint(15, 90)):     # events in session
                    t += rng.expovariate(1 / 45.0)
                    ev = min(int(rng.expovariate(1 / 8.0) + skill * 10), N_EVENTS - 1)
                    events.append((pid, round(t, 3), ev, round(rng.lognormvariate(skill, 1.0), 3)))
        rng.shuffle(events)
        shards.append(events)
    return shards


def sessionize(events):
    """Sort one shard's raw events and yield per-session features."""
    events = sorted(events, key=lambda e: (e[0], e[1]))
    cur, start = [], 0
    out = []
    for i, e in enumerate(events):
        if cur and (e[0] != cur[-1][0] or e[1] - cur[-1][1] > GAP):
            out.append(cur)
            cur = []
        cur.append(e)
    if cur:
        out.append(cur)
    for k, sess in enumerate(out):
        seq = np.zeros(SEQ, np.int32)
        types = [e[2] + 1 for e in sess[-SEQ:]]
        seq[SEQ - len(types):] = types
        agg = np.zeros(N_AGG, np.float32)
        dur = sess[-1][1] - sess[0][1]
        gaps = [b[1] - a[1] for a, b in zip(sess, sess[1:])]
        vals = [e[3] for e in sess]
        agg[0] = len(sess) / 90.0
        agg[1] = dur / 3600.0
        agg[2] = (sum(gaps) / len(gaps) / 60.0) if gaps else 0.0
        agg[3] = (max(gaps) / 600.0) if gaps else 0.0
        agg[4] = sum(vals) / len(vals)
        agg[5] = max(vals)
        hour = int((sess[0][1] % 86400) // 3600)
        agg[6 + hour % 12] = 1.0
        agg[18] = len(set(e[2] for e in sess)) / N_EVENTS
        agg[19] = sum(1 for e in sess if e[2] >= 20) / len(sess)
        nxt = out[k + 1] if k + 1 < len(out) else None
        churn = 1.0 if (nxt is None or nxt[0][0] != sess[0][0] or nxt[0][1] - sess[-1][1] > 10 * GAP) else 0.0
        yield seq, agg, churn


def make_dataset(shards):
    def shard_gen(i):
        events = shards[int(i)]
        while True:
            yield from sessionize(events)

    sig = (tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((N_AGG,), tf.float32), tf.TensorSpec((), tf.float32))
    ds = tf.data.Dataset.range(N_SHARDS).interleave(
        lambda i: tf.data.Dataset.from_generator(shard_gen, output_signature=sig, args=(i,)),
        cycle_length=4, block_length=8)
    ds = ds.map(lambda s, a, y: ((s, a), y))
    return ds.shuffle(512, seed=3).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(17)
    s = keras.Input((SEQ,), dtype="int32", name="events")
    a = keras.Input((N_AGG,), name="agg")
    x = keras.layers.Embedding(N_EVENTS + 1, 32)(s)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Concatenate()([x, keras.layers.Dense(32, activation="relu")(a)])
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([s, a], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_sessionize_interleave_gametelemetry_")
    try:
        t0 = time.perf_counter()
        shards = make_shards(12)
        full, loss = train(make_dataset(shards))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            batch = next(iter(make_dataset(shards)))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_sessionize_interleave_gametelemetry: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
