"""Proteomics: classify tissue of origin from profile-mode MS1 mass spectra.

The spectra are written to an mzML-style XML file whose m/z and intensity arrays
are zlib-compressed, base64-encoded binary blobs (as instrument converters write
them). A Python generator iterparses the XML, decodes and decompresses each
array, centroids the profile peaks and bins them; tf.data.from_generator feeds
model.fit.
"""
import base64
import json
import os
import shutil
import sys
import tempfile
import time
import zlib
import xml.etree.ElementTree as ET

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N_SPECTRA = 320
N_POINTS = 10000
N_BINS = 1200
N_CLASSES = 4
BATCH = 32
STEPS = 60
EPOCHS = 3
MZ_LO, MZ_HI = 300.0, 1500.0


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


def b64z(arr):
    return base64.b64encode(zlib.compress(arr.tobytes(), 6)).decode("ascii")


def write_mzml(path, rng):
    signature = rng.uniform(MZ_LO + 20, MZ_HI - 20, size=(N_CLASSES, 40))
    labels = rng.integers(0, N_CLASSES, N_SPECTRA)
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<mzML><run><spectrumList count="%d">\n' % N_SPECTRA)
        for i, lab in enumerate(labels):
            mz = np.sort(rng.uniform(MZ_LO, MZ_HI, N_POINTS))
            inten = rng.gamma(1.2, 40.0, N_POINTS).astype(np.float32)
            peaks = np.concatenate([signature[lab], rng.uniform(MZ_LO, MZ_HI, 60)])
            for p in peaks:
                inten += (rng.uniform(500, 4000) * np.exp(-0.5 * ((mz - p) / 0.05) ** 2)).astype(np.float32)
            f.write('<spectrum index="%d" id="scan=%d" defaultArrayLength="%d">\n' % (i, i + 1, N_POINTS))
            f.write('<cvParam name="ms level" value="1"/><userParam name="tissue" value="%d"/>\n' % lab)
            f.write('<binaryDataArrayList count="2">\n')
            f.write('<binaryDataArray><cvParam name="64-bit float"/><cvParam name="zlib compression"/>'
                    '<cvParam name="m/z array"/><binary>%s</binary></binaryDataArray>\n' % b64z(mz.astype(np.float64)))
            f.write('<binaryDataArray><cvParam name="32-bit float"/><cvParam name="zlib compression"/>'
                    '<cvParam name="intensity array"/><binary>%s</binary></binaryDataArray>\n' % b64z(inten))
            f.write('</binaryDataArrayList></spectrum>\n')
        f.write('</spectrumList></run></mzML>\n')


def decode_array(elem):
    names = [c.get("name") for c in elem.findall("cvParam")]
    dtype = np.float64 if "64-bit float" in names else np.float32
    raw = base64.b64decode(elem.find("binary").text)
    if "zlib compression" in names:
        raw = zlib.decompress(raw)
    kind = "mz" if "m/z array" in names else "intensity"
    return kind, np.frombuffer(raw, dtype=dtype)


def centroid_and_bin(mz, inten):
    # simple profile-mode centroiding: local maxima above a noise threshold
    noise = np.median(inten) * 3.0
    is_peak = (inten[1:-1] > inten[:-2]) & (inten[1:-1] >= inten[2:]) & (inten[1:-1] > noise)
    idx = np.nonzero(is_peak)[0] + 1
    w = inten[idx - 1] + inten[idx] + inten[idx + 1]
    cmz = (mz[idx - 1] * inten[idx - 1] + mz[idx] * inten[idx] + mz[idx + 1] * inten[idx + 1]) / w
    hist, _ = np.histogram(cmz, bins=N_BINS, range=(MZ_LO, MZ_HI), weights=w)
    hist = np.log1p(hist)
    return (hist / (hist.max() + 1e-6)).astype(np.float32)


def spectra(path):
    def gen():
        while True:
            for _, elem in ET.iterparse(path, events=("end",)):
                if elem.tag != "spectrum":
                    continue
                arrays = dict(decode_array(b) for b in elem.iter("binaryDataArray"))
                lab = int(elem.find("userParam").get("value"))
                elem.clear()
                yield centroid_and_bin(arrays["mz"], arrays["intensity"]), lab
    return gen


def build_model():
    inp = keras.Input((N_BINS,))
    x = keras.layers.Reshape((N_BINS, 1))(inp)
    x = keras.layers.Conv1D(32, 9, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 9, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 9, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(keras.layers.Concatenate()([x, inp]))
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=2)
    return timer.sec_per_step()


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_input_mzml_base64zlib_fromgen_proteomics_")
    try:
        path = os.path.join(tmp, "tissue_run01.mzML")
        write_mzml(path, rng)
        sig = (tf.TensorSpec((N_BINS,), tf.float32), tf.TensorSpec((), tf.int32))
        ds = tf.data.Dataset.from_generator(spectra(path), output_signature=sig)
        ds = ds.shuffle(64, seed=1).batch(BATCH).prefetch(2)
        full = run(ds)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step" % (full * 1e3)
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = run(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_mzml_base64zlib_fromgen_proteomics:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
