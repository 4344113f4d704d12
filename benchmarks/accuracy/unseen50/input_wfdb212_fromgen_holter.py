"""Holter ECG beat-window classification (normal vs. ectopic rhythm segments).
Synthetic two-lead Holter records are written to disk in the PhysioNet WFDB layout:
a text .hea header plus a .dat file in "format 212" (two 12-bit samples packed into
three bytes). A Python generator parses each header, unpacks the 212 bytes, removes
baseline wander and yields normalised windows to tf.data.Dataset.from_generator -> model.fit.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N_RECORDS = 96
FS = 250
REC_SECONDS = 60
WIN = 1000
BATCH = 32
STEPS = 60
EPOCHS = 2


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

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


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def synth_record(rng, ectopic):
    t = np.arange(FS * REC_SECONDS) / FS
    rr = 0.8 + 0.05 * rng.standard_normal()
    sig = np.zeros((t.size, 2))
    beat_t = 0.3
    while beat_t < t[-1]:
        width = 0.012 if not (ectopic and rng.random() < 0.25) else 0.035
        sig[:, 0] += 1.2 * np.exp(-((t - beat_t) ** 2) / (2 * width ** 2))
        sig[:, 1] += 0.7 * np.exp(-((t - beat_t - 0.01) ** 2) / (2 * width ** 2))
        beat_t += rr * (0.6 if (ectopic and rng.random() < 0.15) else 1.0)
    sig += 0.3 * np.sin(2 * np.pi * 0.2 * t)[:, None]       # baseline wander
    sig += 0.03 * rng.standard_normal(sig.shape)
    adc = np.clip(np.round(sig * 400), -2048, 2047).astype(np.int16)
    return adc


def write_212(path, adc):
    """Pack two 12-bit samples into three bytes (WFDB format 212)."""
    flat = (adc.reshape(-1).astype(np.int32) & 0xFFF)
    if flat.size % 2:
        flat = np.append(flat, 0)
    a, b = flat[0::2], flat[1::2]
    out = np.empty((a.size, 3), np.uint8)
    out[:, 0] = a & 0xFF
    out[:, 1] = ((a >> 8) & 0x0F) | (((b >> 8) & 0x0F) << 4)
    out[:, 2] = b & 0xFF
    out.tofile(path)


def write_records(root, rng):
    labels = {}
    for i in range(N_RECORDS):
        name = f"h{i:04d}"
        ectopic = int(i % 3 == 0)
        adc = synth_record(rng, ectopic)
        write_212(os.path.join(root, name + ".dat"), adc)
        with open(os.path.join(root, name + ".hea"), "w") as f:
            f.write(f"{name} 2 {FS} {adc.shape[0]}\n")
            f.write(f"{name}.dat 212 400(0)/mV 12 0 0 0 0 MLII\n")
            f.write(f"{name}.dat 212 400(0)/mV 12 0 0 0 0 V5\n")
            f.write(f"# label: {'ectopic' if ectopic else 'normal'}\n")
        labels[name] = ectopic
    return labels


def read_header(path):
    with open(path) as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    name, nsig, fs, nsamp = lines[0].split()[:4]
    gains = []
    for ln in lines[1:1 + int(nsig)]:
        gain = float(ln.split()[2].split("(")[0])
        gains.append(gain)
    label = 1 if "ectopic" in lines[-1] else 0
    return int(nsig), int(fs), int(nsamp), gains, label


def read_212(path, nsig, nsamp):
    raw = np.fromfile(path, dtype=np.uint8)
    vals = []
    # straightforward per-frame unpacking, as in many hand-rolled WFDB readers
    for k in range(0, raw.size - 2, 3):
        b0, b1, b2 = int(raw[k]), int(raw[k + 1]), int(raw[k + 2])
        s1 = b0 | ((b1 & 0x0F) << 8)
        s2 = b2 | ((b1 >> 4) << 8)
        if s1 > 2047:
            s1 -= 4096
        if s2 > 2047:
            s2 -= 4096
        vals.append(s1)
        vals.append(s2)
    return np.asarray(vals[: nsig * nsamp], np.float32).reshape(nsamp, nsig)


def window_generator(root, names, seed):
    rng = np.random.default_rng(seed)
    kernel = np.ones(FS // 2 + 1, np.float32) / (FS // 2 + 1)
    while True:
        name = names[rng.integers(len(names))]
        nsig, fs, nsamp, gains, label = read_header(os.path.join(root, name + ".hea"))
        sig = read_212(os.path.join(root, name + ".dat"), nsig, nsamp) / np.asarray(gains, np.float32)
        for _ in range(4):
            start = int(rng.integers(0, nsamp - WIN - FS))
            seg = sig[start:start + WIN + FS]
            base = np.stack([np.convolve(seg[:, c], kernel, mode="same") for c in range(nsig)], 1)
            win = (seg - base)[FS // 2:FS // 2 + WIN]
            win = (win - win.mean(0)) / (win.std(0) + 1e-6)
            yield win.astype(np.float32), np.float32(label)


def make_model():
    inp = keras.Input((WIN, 2))
    x = inp
    for f in (40, 56, 80):
        x = keras.layers.Conv1D(f, 9, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    np.random.seed(SEED)
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_wfdb212_fromgen_holter_")
    try:
        labels = write_records(tmp, np.random.default_rng(SEED))
        names = sorted(labels)
        sig_spec = (tf.TensorSpec((WIN, 2), tf.float32), tf.TensorSpec((), tf.float32))
        ds = tf.data.Dataset.from_generator(lambda: window_generator(tmp, names, SEED),
                                            output_signature=sig_spec).batch(BATCH).prefetch(2)
        model = make_model()
        timer = StepTimer()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = make_model()
            timer2 = StepTimer()
            model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_wfdb212_fromgen_holter: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
