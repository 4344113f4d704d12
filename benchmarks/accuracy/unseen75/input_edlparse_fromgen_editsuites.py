"""Film edit suite: classify the transition type of each event in CMX3600 edit
decision lists (EDLs). A Python generator parses every EDL event block (event
line, timecodes, FROM CLIP NAME, SOURCE FILE, M2 speed and editor comments) and
hashes clip names and comments into character trigrams; tf.data.from_generator
feeds model.fit. Intended bottleneck: INPUT (Python-side EDL parsing)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
import re
import zlib

SEED, BATCH, STEPS, EPOCHS = 75, 64, 80, 3
NFEAT, NCLS, COMMENTS = 1024, 4, 3
FPS = 24
WORDS = ("wide master closeup insert reaction pickup coverage dolly crane handheld "
         "steadicam rain night exterior interior kitchen rooftop alley chase argument "
         "kiss reveal flashback montage titles vfx plate greenscreen pushin whip").split()
TRANS = ["C", "D 024", "W001 030", "K B"]


def frames_to_tc(fr):
    return f"{fr // (FPS*3600):02d}:{fr // (FPS*60) % 60:02d}:{fr // FPS % 60:02d}:{fr % FPS:02d}"


def make_events(n, rng):
    evs, labels = [], []
    rec = 3600 * FPS
    for i in range(n):
        lab = int(rng.integers(NCLS))
        src_in = int(rng.integers(0, 20 * 3600 * FPS))
        dur = int(rng.integers(12, 400)) + 30 * lab
        reel = f"A{rng.integers(1, 90):03d}C{rng.integers(1, 40):03d}"
        lines = [f"{i % 1000:03d}  {reel} V     {TRANS[lab]:<8} {frames_to_tc(src_in)} "
                 f"{frames_to_tc(src_in + dur)} {frames_to_tc(rec)} {frames_to_tc(rec + dur)}"]
        rec += dur
        name = "_".join(rng.choice(WORDS, 4)) + f"_T{rng.integers(1, 12)}"
        lines.append(f"* FROM CLIP NAME:  {name.upper()}.MOV")
        lines.append(f"* SOURCE FILE: {reel}_{rng.integers(100000):06d}.ARI")
        if rng.random() < 0.3:
            lines.append(f"M2   {reel}       {rng.choice([12.0, 48.0, 72.0]):05.1f}                {frames_to_tc(src_in)}")
        for _ in range(COMMENTS):
            lines.append("* COMMENT: " + " ".join(rng.choice(WORDS, 12 + lab)))
        evs.append("\n".join(lines))
        labels.append(lab)
    return evs, np.array(labels, np.int32)


TC_RE = re.compile(r"(\d\d):(\d\d):(\d\d):(\d\d)")


def tc_to_frames(s):
    h, m, sec, f = (int(x) for x in TC_RE.match(s).groups())
    return ((h * 60 + m) * 60 + sec) * FPS + f


def parse_event(text):
    v = np.zeros(NFEAT, np.float32)
    for line in text.split("\n"):
        if line.startswith("* FROM CLIP NAME:") or line.startswith("* COMMENT:"):
            body = line.split(":", 1)[1].strip().lower()
            for j in range(len(body) - 2):
                v[zlib.crc32(body[j:j + 3].encode()) % (NFEAT - 16)] += 1.0
        elif line.startswith("* SOURCE FILE:"):
            v[NFEAT - 16 + zlib.crc32(line[-4:].encode()) % 4] = 1.0
        elif line.startswith("M2"):
            v[NFEAT - 12] = float(line.split()[2]) / 72.0
        elif line[:3].isdigit():
            parts = line.split()
            fr = [tc_to_frames(p) for p in parts[-4:]]
            v[NFEAT - 10] = (fr[1] - fr[0]) / 400.0
            v[NFEAT - 9] = (fr[3] - fr[2]) / 400.0
            v[NFEAT - 8] = len(parts) / 10.0
    n = np.linalg.norm(v[:NFEAT - 16])
    v[:NFEAT - 16] /= max(n, 1.0)
    return v


def edl_generator(events, labels):
    def gen():
        i = 0
        while True:
            k = i % len(events)
            yield parse_event(events[k]), labels[k]
            i += 1
    return gen


def make_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(NCLS)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model, timer = make_model(), StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    rng = np.random.default_rng(SEED)
    events, labels = make_events(2000, rng)
    sig = (tf.TensorSpec((NFEAT,), tf.float32), tf.TensorSpec((), tf.int32))
    ds = (tf.data.Dataset.from_generator(edl_generator(events, labels), output_signature=sig)
          .batch(BATCH).prefetch(2))
    full = run(ds)
    compute = None
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
    report("input_edlparse_fromgen_editsuites", full, compute)


if __name__ == "__main__":
    main()
