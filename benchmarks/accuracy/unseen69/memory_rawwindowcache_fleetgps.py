"""Delivery-van fleet: harsh-manoeuvre classification from GNSS/IMU windows.

Input path: tf.data.Dataset.from_generator; the generator synthesises each
vehicle's raw 100 Hz GNSS+IMU window (float64), downsamples it for the model,
and -- the bug -- keeps every raw float64 window in a module-level
"map-matching replay" dict keyed by (vehicle, window id) that is never evicted.
Window ids keep advancing, so the dict grows every step. The model is small.
Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

RAW_LEN = 2048
CH = 8
DOWN = 16
BATCH = 64
STEPS = 50
EPOCHS = 3
REPLAY = {}


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1048576
    return 0.0


def gen():
    rng = np.random.default_rng(69)
    wid = 0
    while True:
        veh = int(rng.integers(0, 500))
        label = int(rng.integers(0, 3))
        raw = rng.standard_normal((RAW_LEN, CH))
        raw[:, 3] += label * np.sin(np.linspace(0, 6.28 * (label + 1), RAW_LEN))
        REPLAY[(veh, wid)] = raw                 # never evicted
        wid += 1
        x = raw.reshape(RAW_LEN // DOWN, DOWN, CH).mean(1).astype(np.float32)
        yield x, label


def build_model():
    m = keras.Sequential([keras.Input((RAW_LEN // DOWN, CH)),
                          keras.layers.Conv1D(32, 5, activation="relu"), keras.layers.MaxPooling1D(2),
                          keras.layers.Conv1D(32, 5, activation="relu"), keras.layers.GlobalAveragePooling1D(),
                          keras.layers.Dense(3)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: replay windows {len(REPLAY)}, RSS {rss_gib():.2f} GiB", flush=True)
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    sig = (tf.TensorSpec((RAW_LEN // DOWN, CH), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(1)
    timer = StepTimer(); model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[rawwindowcache] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, replay {len(REPLAY)} windows, "
          f"RSS {rss_gib():.2f} GiB, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        xb, yb = next(iter(ds))
        tds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        t2 = StepTimer(); m2 = build_model()
        m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[rawwindowcache] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
