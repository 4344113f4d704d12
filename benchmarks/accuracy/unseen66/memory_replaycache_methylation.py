"""Genomics/epigenetics: tumour-vs-normal classifier over CpG methylation beta
values. A Python generator (from_generator -> model.fit) simulates bisulfite
read counts per batch and keeps every produced batch, including the raw
float64 count matrices, in a 'replay' list that is never trimmed.
Deliberate bottleneck: memory growth during training."""
import os, sys, time, json, resource
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, NCPG = 128, 120, 2, 2048


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1048576


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None; self.rss = []
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
        if batch % 50 == 0:
            self.rss.append(round(rss_gib(), 2))
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class MethylationStream:
    def __init__(self, seed=66):
        self.rng = np.random.default_rng(seed)
        self.replay = []   # the leak: every batch is kept "for later replay"
    def batch(self):
        y = self.rng.integers(0, 2, BATCH).astype(np.float32)
        depth = self.rng.integers(8, 60, (BATCH, NCPG)).astype(np.float64)
        p = np.where(y[:, None] == 1, 0.35, 0.6) + self.rng.normal(0, 0.1, (BATCH, NCPG))
        p = np.clip(p, 0.01, 0.99)
        meth = np.round(depth * p)
        beta = (meth / depth).astype(np.float32)
        self.replay.append((depth, meth, p, beta, y))
        return beta, y
    def __call__(self):
        while True:
            yield self.batch()


def build_model():
    m = keras.Sequential([keras.Input((NCPG,)), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step(), t


def main():
    stream = MethylationStream()
    sig = (tf.TensorSpec((BATCH, NCPG), tf.float32), tf.TensorSpec((BATCH,), tf.float32))
    ds = tf.data.Dataset.from_generator(stream, output_signature=sig).prefetch(2)
    full, t = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = (f"[memory_replaycache_methylation] full {full*1000:.1f} ms/step replay batches {len(stream.replay)} "
           f"peak RSS trace GiB {t.rss}")
    if TRUTH:
        fixed = MethylationStream(seed=5).batch()
        comp, _ = run(tf.data.Dataset.from_tensors(fixed).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" peak {rss_gib():.2f} GiB wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
