"""Sleep medicine: five-class sleep staging from 30-second polysomnography epochs.

Each synthetic night is written as a European Data Format (EDF) file: a
256-byte ASCII header, one ASCII field block per signal (digital/physical
ranges, samples per record) and int16 data records. A tf.data pipeline of
(file, epoch) pairs calls a numpy_function that parses the EDF header, seeks
the data record, converts digital to physical units, and band-pass filters
each channel with a windowed-sinc FIR before batching for model.fit.
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

N_NIGHTS = 24
RECORDS = 80            # 30-s data records per night
FS = 100
SIGNALS = ["EEG Fpz-Cz", "EEG Pz-Oz", "EOG horizontal", "EMG submental"]
NS = FS * 30
TAPS = 601
BATCH = 32
STEPS = 75
EPOCHS = 4


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

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def field(v, n):
    return str(v)[:n].ljust(n).encode("ascii")


def write_edf(path, rng):
    ns = len(SIGNALS)
    stages = np.clip(np.cumsum(rng.integers(-1, 2, RECORDS)) % 5, 0, 4)
    hdr = b"".join([field(0, 8), field("X F 01-JAN-1970 subj", 80), field("Startdate 01-JAN-2020 PSG", 80),
                    field("01.01.20", 8), field("22.00.00", 8), field(256 * (ns + 1), 8), field("", 44),
                    field(RECORDS, 8), field(30, 8), field(ns, 4)])
    phys = [(-200.0, 200.0), (-200.0, 200.0), (-500.0, 500.0), (-100.0, 100.0)]
    cols = [[field(s, 16) for s in SIGNALS], [field("AgAgCl electrode", 80)] * ns, [field("uV", 8)] * ns,
            [field(p[0], 8) for p in phys], [field(p[1], 8) for p in phys], [field(-32768, 8)] * ns,
            [field(32767, 8)] * ns, [field("HP:0.3Hz LP:35Hz", 80)] * ns, [field(NS, 8)] * ns, [field("", 32)] * ns]
    hdr += b"".join(b"".join(c) for c in cols)
    t = np.arange(NS) / FS
    with open(path, "wb") as f:
        f.write(hdr)
        for r in range(RECORDS):
            st = stages[r]
            alpha = (st == 0) * 40 * np.sin(2 * np.pi * 10 * t + rng.uniform(0, 6))
            delta = (st >= 3) * 80 * np.sin(2 * np.pi * 1.5 * t + rng.uniform(0, 6))
            spindle = (st == 2) * 30 * np.sin(2 * np.pi * 13 * t) * (np.sin(2 * np.pi * 0.2 * t) > 0.8)
            eeg = alpha + delta + spindle + rng.normal(0, 15, NS)
            eog = (st == 4) * 150 * np.sign(np.sin(2 * np.pi * 0.3 * t)) + rng.normal(0, 20, NS)
            emg = rng.normal(0, 40 if st == 0 else 10, NS)
            for sig, (pmin, pmax) in zip([eeg, eeg * 0.7 + rng.normal(0, 5, NS), eog, emg], phys):
                dig = (np.clip(sig, pmin, pmax) - pmin) / (pmax - pmin) * 65535 - 32768
                f.write(dig.astype("<i2").tobytes())
    return stages


def fir_bandpass(lo, hi, taps):
    n = np.arange(taps) - (taps - 1) / 2
    h = (2 * hi / FS) * np.sinc(2 * hi / FS * n) - (2 * lo / FS) * np.sinc(2 * lo / FS * n)
    return (h * np.hamming(taps)).astype(np.float64)


BANDS = [fir_bandpass(0.3, 35.0, TAPS), fir_bandpass(0.3, 35.0, TAPS), fir_bandpass(0.3, 10.0, TAPS),
         fir_bandpass(10.0, 45.0, TAPS)]


def read_epoch(path, rec):
    path = path.decode() if isinstance(path, bytes) else path
    with open(path, "rb") as f:
        main = f.read(256)
        hdr_bytes = int(main[184:192])
        ns = int(main[252:256])
        sig = f.read(hdr_bytes - 256)
        def col(offset, width):
            return [sig[offset + i * width: offset + (i + 1) * width].decode().strip() for i in range(ns)]
        o = ns * (16 + 80 + 8)
        pmin = np.array(col(o, 8), float); o += ns * 8
        pmax = np.array(col(o, 8), float); o += ns * 8
        dmin = np.array(col(o, 8), float); o += ns * 8
        dmax = np.array(col(o, 8), float); o += ns * 8 + ns * 80
        nsamp = np.array(col(o, 8), int)
        f.seek(hdr_bytes + int(rec) * int(nsamp.sum()) * 2)
        raw = np.frombuffer(f.read(int(nsamp.sum()) * 2), dtype="<i2")
    out = np.empty((NS, ns), np.float32)
    start = 0
    for c in range(ns):
        d = raw[start:start + nsamp[c]].astype(np.float64)
        start += nsamp[c]
        x = (d - dmin[c]) * (pmax[c] - pmin[c]) / (dmax[c] - dmin[c]) + pmin[c]
        x = np.convolve(x - x.mean(), BANDS[c], mode="same")
        out[:, c] = x / 100.0
    return out


def build_model():
    inp = keras.Input((NS, len(SIGNALS)))
    x = keras.layers.Conv1D(16, 25, strides=3, activation="relu")(inp)
    x = keras.layers.MaxPooling1D(4)(x)
    x = keras.layers.Conv1D(32, 9, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(32, 9, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(4)(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(5, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=2)
    return timer.sec_per_step()


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_input_edf_numpyfn_sleepstaging_")
    try:
        files, recs, labels = [], [], []
        for n in range(N_NIGHTS):
            p = os.path.join(tmp, "SC4%03d-PSG.edf" % n)
            st = write_edf(p, rng)
            files += [p] * RECORDS
            recs += list(range(RECORDS))
            labels += list(st)
        ds = tf.data.Dataset.from_tensor_slices((files, np.array(recs, np.int64), np.array(labels, np.int64)))
        ds = ds.shuffle(len(files), seed=2).repeat()

        def load(p, r, y):
            x = tf.numpy_function(read_epoch, [p, r], tf.float32)
            x.set_shape((NS, len(SIGNALS)))
            return x, y
        ds = ds.map(load).batch(BATCH)
        full = run(ds)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step" % (full * 1e3)
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = run(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_edf_numpyfn_sleepstaging:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
