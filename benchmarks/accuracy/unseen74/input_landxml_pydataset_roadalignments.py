"""Road-alignment design-speed classifier: a keras.utils.PyDataset parses LandXML-style
alignment strings (xml.etree) per batch and derives curvature / grade features."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

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


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

import xml.etree.ElementTree as ET

STATIONS = 48
BATCH = 32
STEPS = 30
EPOCHS = 3
N_ROADS = 800


def make_landxml(n, seed=3):
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for _ in range(n):
        cls = int(rng.integers(0, 4))
        radius = [60.0, 150.0, 400.0, 1200.0][cls] * rng.uniform(0.8, 1.2)
        heading, x, y, z = rng.uniform(0, 6.28), 0.0, 0.0, 100.0
        pts = []
        for s in range(STATIONS):
            heading += rng.normal(0, 20.0 / radius)
            x += 20.0 * np.cos(heading)
            y += 20.0 * np.sin(heading)
            z += rng.normal(0, 0.4 / (cls + 1))
            pts.append(f'<Station sta="{s*20:.2f}"><Pnt>{y:.3f} {x:.3f} {z:.3f}</Pnt>'
                       f'<Feature code="lane" width="{3.0 + 0.25*cls:.2f}"/></Station>')
        docs.append('<?xml version="1.0"?><LandXML><Alignments><Alignment name="A">'
                    '<CoordGeom>' + "".join(pts) + '</CoordGeom></Alignment></Alignments></LandXML>')
        labels.append(cls)
    return docs, np.array(labels, np.int32)


def alignment_features(doc, rng):
    root = ET.fromstring(doc)
    rows = []
    for st in root.iter("Station"):
        n, e, z = (float(v) for v in st.find("Pnt").text.split())
        w = float(st.find("Feature").get("width"))
        rows.append((e, n, z, w))
    a = np.asarray(rows, np.float64)
    d = np.diff(a[:, :2], axis=0)
    head = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    curv = np.concatenate([[0.0], np.diff(head), [0.0]]) / 20.0
    grade = np.concatenate([[0.0], np.diff(a[:, 2]) / 20.0])
    feats = np.stack([curv * 100, grade * 10, a[:, 3] - 3.0,
                      np.convolve(np.abs(curv) * 100, np.ones(5) / 5, mode="same")], -1)
    if rng.random() < 0.5:
        feats = feats[::-1].copy()
        feats[:, 1] *= -1
    return feats.astype(np.float32)


class AlignmentBatches(keras.utils.PyDataset):
    def __init__(self, docs, labels, **kw):
        super().__init__(**kw)
        self.docs, self.labels = docs, labels
        self.rng = np.random.default_rng(5)

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        ids = self.rng.integers(0, len(self.docs), BATCH)
        x = np.stack([alignment_features(self.docs[j], self.rng) for j in ids])
        return x, self.labels[ids]


def build_model():
    inp = keras.Input((STATIONS, 4))
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_landxml_pydataset_roadalignments_")
    try:
        docs, labels = make_landxml(N_ROADS)
        data = AlignmentBatches(docs, labels)
        tf.random.set_seed(0)
        timer = StepTimer()
        model = build_model()
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = sec_per_step(timer.gaps)
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_landxml_pydataset_roadalignments] full {full*1000:.1f} ms/step "
              f"({1.0/full:.2f} steps/s) over {len(timer.gaps)} gaps, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            xb, yb = data[0]
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            tf.random.set_seed(0)
            t2 = StepTimer()
            m2 = build_model()
            m2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = sec_per_step(t2.gaps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_landxml_pydataset_roadalignments] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
