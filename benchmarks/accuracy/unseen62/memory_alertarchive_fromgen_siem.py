"""SIEM alert triage model whose input generator leaks every raw batch.

Data path: a Python generator synthesises raw alert telemetry for each
batch (256 alerts x 2048 float64 sensor/counter readings), reduces it to 64
float32 summary features for the model, and -- "for later explainability"
-- appends the raw float64 block and the summaries to a module-level
ALERT_ARCHIVE list that is never trimmed. tf.data.Dataset.from_generator ->
model.fit.
Deliberate bottleneck: host memory grows by ~4 MiB per step (the archive),
not the (small) model.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, resource
import numpy as np
import tensorflow as tf
import keras

BATCH = 256
RAW = 2048
FEAT = 64
STEPS = 220
EPOCHS = 2
ALERT_ARCHIVE = []


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last, self.rss = [], None, []

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if batch % 50 == 0:
            self.rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def alert_batches(seed):
    rng = np.random.default_rng(seed)
    proj = rng.normal(size=(RAW, FEAT)) / np.sqrt(RAW)
    while True:
        raw = rng.standard_normal((BATCH, RAW))
        raw[:, :16] += rng.integers(0, 2, size=(BATCH, 1)) * 1.5
        feats = (raw @ proj).astype(np.float32)
        y = (raw[:, :16].mean(axis=1) > 0.7).astype(np.float32)
        ALERT_ARCHIVE.append({"raw": raw, "features": feats, "labels": y})
        yield feats, y


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), timer.rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    sig = (tf.TensorSpec((BATCH, FEAT), tf.float32), tf.TensorSpec((BATCH,), tf.float32))
    ds = tf.data.Dataset.from_generator(lambda: alert_batches(1), output_signature=sig).prefetch(1)
    full, rss = run(ds)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = (f"memory_alertarchive_fromgen_siem: {sps:.2f} steps/s ({full*1000:.1f} ms/step), "
           f"archive {len(ALERT_ARCHIVE)} batches, peak RSS MiB during training {rss}")
    if args.truth:
        batch = next(iter(ds))
        compute, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
