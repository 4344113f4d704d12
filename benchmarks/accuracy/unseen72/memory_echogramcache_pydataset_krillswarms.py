"""Antarctic krill acoustics: detect krill swarms in multi-frequency echograms.

Input path: keras.utils.PyDataset that dequantises stored uint8 Sv pings to calibrated
float64 Sv, applies a time-varied-gain correction and a random ping shift, then decimates to the
model resolution. Cause: __getitem__ "caches" each calibrated full-resolution batch keyed by
(epoch, index, shift); the key never repeats, so the cache only grows during training.
"""
import gc, json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 40, 36, 2
PINGS, BINS, FREQS, N_ECHO = 128, 192, 3, 300


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024 ** 2
    return 0.0


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last, self.rss = [], None, []

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
        if batch % 10 == 0:
            self.rss.append(round(rss_gib(), 2))

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def make_echograms(rng):
    raw = rng.integers(20, 60, (N_ECHO, PINGS, BINS, FREQS), dtype=np.uint8)
    labels = rng.random(N_ECHO) < 0.5
    for i in np.nonzero(labels)[0]:
        p0, b0 = rng.integers(10, PINGS - 40), rng.integers(20, BINS - 40)
        raw[i, p0:p0 + 30, b0:b0 + 20, :] += np.array([60, 90, 70], np.uint8)
    return raw, labels.astype(np.float32)


class EchogramSequence(keras.utils.PyDataset):
    def __init__(self, raw, labels, seed):
        super().__init__()
        self.raw, self.labels, self.rng = raw, labels, np.random.default_rng(seed)
        self.cache, self.epoch = {}, 0
        self.tvg = (20 * np.log10(np.arange(1, BINS + 1) * 0.5) + 2 * 0.01 * np.arange(BINS) * 0.5)[None, None, :, None]

    def __len__(self):
        return STEPS

    def on_epoch_end(self):
        self.epoch += 1

    def __getitem__(self, idx):
        pick = self.rng.integers(0, len(self.raw), BATCH)
        shift = int(self.rng.integers(0, 16))
        sv = self.raw[pick].astype(np.float64) * 0.5 - 110.0 + self.tvg * 0.05
        sv = np.roll(sv, shift, axis=1)
        self.cache[(self.epoch, idx, shift)] = sv
        x = sv[:, ::2, ::2, :]
        return ((x + 80.0) / 20.0).astype(np.float32), self.labels[pick]


def make_model():
    return keras.Sequential([
        keras.Input((PINGS // 2, BINS // 2, FREQS)),
        keras.layers.AveragePooling2D(2),
        keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(1),
    ])


def train(data):
    keras.utils.set_random_seed(7)
    model = make_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True))
    timer = StepTimer()
    if isinstance(data, keras.utils.PyDataset):
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer


def main():
    raw, labels = make_echograms(np.random.default_rng(72))
    seq = EchogramSequence(raw, labels, 1)
    timer = train(seq)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = (f"krillswarms: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), cache {len(seq.cache)} batches "
            f"{sum(v.nbytes for v in seq.cache.values()) / 1024 ** 3:.2f} GiB, RSS GiB every 10 steps {timer.rss}")
    if TRUTH:
        x, y = EchogramSequence(raw, labels, 2)[0]
        del seq
        gc.collect()
        comp = train(tf.data.Dataset.from_tensors((x, y)).repeat()).sec_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
