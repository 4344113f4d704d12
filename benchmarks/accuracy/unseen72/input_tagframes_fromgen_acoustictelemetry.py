"""Acoustic telemetry: classify tagged-fish behaviour from raw receiver detection frames.

Input path: a Python generator (tf.data.Dataset.from_generator) that walks a binary
receiver log, unpacks every 22-byte detection frame with struct, verifies a checksum,
and turns a window of detections into interval / signal / sensor features.
"""
import json, os, struct, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 64, 60, 3
WINDOW, N_FISH, FRAMES_PER_FISH = 40, 600, 400
FRAME = struct.Struct("<HIIhhHHI")  # sync, tag, ts, signal, noise, temp, depth, checksum


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def build_log(rng):
    """Binary receiver log: FRAMES_PER_FISH frames per fish, behaviour class per fish."""
    labels = rng.integers(0, 4, N_FISH)
    n = N_FISH * FRAMES_PER_FISH
    tag = np.repeat(np.arange(N_FISH, dtype=np.uint32) + 46000, FRAMES_PER_FISH)
    cls = np.repeat(labels, FRAMES_PER_FISH)
    gaps = rng.exponential(60.0 + 40.0 * cls, n).astype(np.uint32) + 1
    ts = np.cumsum(gaps.reshape(N_FISH, -1), axis=1).ravel().astype(np.uint32)
    sig = (-60 - 8 * cls + rng.normal(0, 6, n)).astype(np.int16)
    noise = (-95 + rng.normal(0, 3, n)).astype(np.int16)
    temp = (1200 + 80 * cls + rng.normal(0, 30, n)).astype(np.uint16)
    depth = (np.abs(rng.normal(50 + 60 * (cls == 2) + 120 * (cls == 3), 25, n)) * 10).astype(np.uint16)
    rec = np.zeros(n, dtype=np.dtype([("sync", "<u2"), ("tag", "<u4"), ("ts", "<u4"), ("sig", "<i2"),
                                      ("noise", "<i2"), ("temp", "<u2"), ("depth", "<u2"), ("ck", "<u4")]))
    rec["sync"], rec["tag"], rec["ts"], rec["sig"] = 0xA55A, tag, ts, sig
    rec["noise"], rec["temp"], rec["depth"] = noise, temp, depth
    raw = rec.view(np.uint8).reshape(n, 22)
    rec["ck"] = raw[:, :18].astype(np.uint32).sum(axis=1) & 0xFFFF
    return rec.tobytes(), labels


def detections(blob, labels, seed):
    rng = np.random.default_rng(seed)
    while True:
        fish = int(rng.integers(0, N_FISH))
        start = int(rng.integers(0, FRAMES_PER_FISH - WINDOW))
        off = (fish * FRAMES_PER_FISH + start) * 22
        rows, prev_ts = [], None
        for k in range(WINDOW):
            o = off + 22 * k
            sync, tag, ts, sig, noise, temp, depth, ck = FRAME.unpack_from(blob, o)
            if sync != 0xA55A or (sum(blob[o:o + 18]) & 0xFFFF) != ck:
                continue
            dt = 0.0 if prev_ts is None else (ts - prev_ts) / 100.0
            prev_ts = ts
            snr = (sig - noise) / 40.0
            rows.append((dt, sig / -100.0, snr, temp / 1500.0, depth / 2000.0))
        while len(rows) < WINDOW:
            rows.append(rows[-1])
        yield np.asarray(rows, np.float32).ravel(), np.int32(labels[fish])


def make_model():
    return keras.Sequential([
        keras.Input((WINDOW * 5,)),
        keras.layers.Dense(640, activation="relu"),
        keras.layers.Dense(640, activation="relu"),
        keras.layers.Dense(320, activation="relu"),
        keras.layers.Dense(4),
    ])


def train(ds):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    rng = np.random.default_rng(72)
    blob, labels = build_log(rng)
    sig = (tf.TensorSpec((WINDOW * 5,), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(lambda: detections(blob, labels, 1), output_signature=sig)
    ds = ds.batch(BATCH).prefetch(2)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"tagframes: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if TRUTH:
        x, y = next(iter(tf.data.Dataset.from_generator(lambda: detections(blob, labels, 2), output_signature=sig).batch(BATCH)))
        comp = train(tf.data.Dataset.from_tensors((x, y)).repeat())
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
