import time
_WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

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


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Audiobook narrator identification: a keras.utils.PyDataset reads, for every
# item, a CUE sheet (text), parses TRACK/INDEX mm:ss:ff lines with a regex,
# slices the decoded PCM into chapters and computes per-chapter loudness,
# pause ratio and an autocorrelation pitch estimate in numpy/Python.
# model.fit consumes the PyDataset directly (workers=1, no multiprocessing).
# ---------------------------------------------------------------------------
import math
import re

SEED = 60
N_BOOKS = 256
SR = 8000
N_SAMPLES = 12000
N_CHAPTERS = 6
N_NARRATORS = 10
BATCH = 32
STEPS = 40
EPOCHS = 2
CUE_RE = re.compile(r'^\s*INDEX 01 (\d\d):(\d\d):(\d\d)\s*$')
TITLE_RE = re.compile(r'^\s*TITLE "(.*)"\s*$')


def make_book(rng, narrator):
    bounds = np.sort(rng.choice(np.arange(1, N_SAMPLES // 75 - 1), N_CHAPTERS - 1, replace=False))
    lines = ['REM GENRE "Audiobook"', 'PERFORMER "Narrator %d"' % narrator,
             'FILE "book.wav" WAVE']
    starts = [0] + list(bounds)
    for k, st in enumerate(starts):
        sec = st * 75 // 75
        mm, ss, ff = sec // 3600, (sec // 75) % 60, sec % 75
        lines += ['  TRACK %02d AUDIO' % (k + 1), '    TITLE "Chapter %d"' % (k + 1),
                  '    INDEX 01 %02d:%02d:%02d' % (mm, ss, ff)]
    cue = "\n".join(lines)
    t = np.arange(N_SAMPLES) / SR
    f0 = 90 + 15 * narrator
    voice = np.sin(2 * np.pi * f0 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * (2 + narrator * 0.3) * t) > 0.3)
    pcm = (np.clip(voice * 0.6 + rng.normal(0, 0.05, N_SAMPLES), -1, 1) * 32767).astype("<i2").tobytes()
    return cue, pcm


def chapter_features(cue, pcm_bytes):
    starts, titles = [], []
    for line in cue.splitlines():
        m = CUE_RE.match(line)
        if m:
            mm, ss, ff = (int(g) for g in m.groups())
            frames = (mm * 60 + ss) * 75 + ff
            starts.append(frames * 75)   # 75 frames/sec in CUE; here scaled to samples
        m2 = TITLE_RE.match(line)
        if m2:
            titles.append(m2.group(1))
    pcm = np.frombuffer(pcm_bytes, dtype="<i2").astype(np.float64) / 32768.0
    starts = [min(s, len(pcm) - 400) for s in starts] + [len(pcm)]
    feats = []
    for a, b in zip(starts[:-1], starts[1:]):
        seg = pcm[a:max(b, a + 400)]
        rms = math.sqrt(float(np.mean(seg * seg)) + 1e-12)
        # pause ratio over 20 ms windows
        win = SR // 50
        n = len(seg) // win
        quiet = 0
        for w in range(n):
            e = float(np.mean(np.abs(seg[w * win:(w + 1) * win])))
            if e < 0.05:
                quiet += 1
        # autocorrelation pitch estimate on a 50 ms excerpt
        ex = seg[:400] - seg[:400].mean()
        best, best_lag = -1.0, 0
        for lag in range(20, 120):
            c = float(np.dot(ex[:-lag], ex[lag:]))
            if c > best:
                best, best_lag = c, lag
        pitch = SR / best_lag if best_lag else 0.0
        feats += [rms, quiet / max(n, 1), pitch / 300.0, len(seg) / N_SAMPLES]
    return np.asarray(feats + [len(titles) / 10.0], np.float32)


FEAT = N_CHAPTERS * 4 + 1


class CueSheetBooks(keras.utils.PyDataset):
    def __init__(self, books, labels, **kw):
        super().__init__(**kw)
        self.books, self.labels = books, labels

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rows, ys = [], []
        for k in range(BATCH):
            j = (idx * BATCH + k) % len(self.books)
            rows.append(chapter_features(*self.books[j]))
            ys.append(self.labels[j])
        return np.stack(rows), np.asarray(ys, np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(N_NARRATORS, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, N_NARRATORS, N_BOOKS)
    books = [make_book(rng, int(g)) for g in labels]
    seq = CueSheetBooks(books, labels, workers=1, use_multiprocessing=False)
    model = build_model()
    timer = StepTimer()
    model.fit(seq, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[input_cuesheet_pydataset_audiobookchapters] full run: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, {len(timer.gaps)} gaps")
    if args.truth:
        xb, yb = seq[0]
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = sec_per_step(timer2.gaps)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_cuesheet_pydataset_audiobookchapters] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
