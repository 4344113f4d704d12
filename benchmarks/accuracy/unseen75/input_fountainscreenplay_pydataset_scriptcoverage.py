"""Script coverage for a theatre/film development office: predict the genre of
screenplay scenes written in Fountain markup. A keras.utils.PyDataset parses each
scene in __getitem__ (scene headings, action, CHARACTER cues, parentheticals,
dialogue), tokenises with a regex and hashes words per element type; it feeds
model.fit. Intended bottleneck: INPUT (Python-side screenplay parsing)."""
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

SEED, BATCH, STEPS, EPOCHS = 75, 48, 90, 3
NFEAT, NCLS, DIALOGUE_BLOCKS = 1024, 5, 24
NAMES = ["MARGO", "DESMOND", "IRIS", "TOBIAS", "NELL", "RAFAEL", "OKSANA", "GRIFFIN"]
PLACES = ["WAREHOUSE", "DINER", "PRECINCT", "BALLROOM", "MOTEL ROOM", "SPACESHIP BRIDGE", "CHURCH"]
GENRE_WORDS = [
    "gun shot chase blood detective alibi motive body corpse warrant".split(),
    "laugh joke silly party cake wedding clumsy prank costume banana".split(),
    "ship laser planet android signal orbit reactor alien hyperdrive colony".split(),
    "scream shadow door creak basement whisper ghost candle mirror knife".split(),
    "love letter rain kiss heart dance memory promise farewell station".split(),
]
COMMON = "the a and of to in is you that it he she was for on are with they be at one have this from".split()
PAREN = ["(beat)", "(quietly)", "(O.S.)", "(V.O.)", "(beat, then)", "(sotto)"]


def make_scene(rng, g):
    lines = [f"{rng.choice(['INT.', 'EXT.'])} {rng.choice(PLACES)} - {rng.choice(['DAY', 'NIGHT', 'DUSK'])}", ""]
    words = GENRE_WORDS[g] + COMMON * 2
    lines.append(" ".join(rng.choice(words, int(rng.integers(15, 40)))).capitalize() + ".")
    lines.append("")
    for _ in range(DIALOGUE_BLOCKS):
        lines.append(str(rng.choice(NAMES)))
        if rng.random() < 0.3:
            lines.append(str(rng.choice(PAREN)))
        lines.append(" ".join(rng.choice(words, int(rng.integers(6, 24)))).capitalize() + "?")
        lines.append("")
        if rng.random() < 0.4:
            lines.append(" ".join(rng.choice(words, int(rng.integers(8, 20)))).capitalize() + ".")
            lines.append("")
    lines.append("CUT TO:")
    return "\n".join(lines)


WORD_RE = re.compile(r"[a-z']+")
HEAD_RE = re.compile(r"^(INT\.|EXT\.|INT/EXT\.)\s+(.+?)\s+-\s+(\w+)$")


def parse_scene(text):
    v = np.zeros(NFEAT, np.float32)
    half = (NFEAT - 32) // 2
    state, speakers = "action", set()
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            state = "action"
            continue
        m = HEAD_RE.match(s)
        if m:
            v[NFEAT - 32 + zlib.crc32(m.group(3).encode()) % 8] = 1.0
            v[NFEAT - 24 + zlib.crc32(m.group(2).encode()) % 8] = 1.0
            continue
        if s.endswith("TO:"):
            v[NFEAT - 1] = 1.0
            continue
        if s.isupper() and len(s) < 30:
            speakers.add(s)
            state = "dialogue"
            continue
        if s.startswith("(") and s.endswith(")"):
            v[NFEAT - 10] += 1.0
            continue
        off = 0 if state == "dialogue" else half
        for w in WORD_RE.findall(s.lower()):
            v[off + zlib.crc32(w.encode()) % half] += 1.0
    v[NFEAT - 12] = len(speakers) / 8.0
    v[:NFEAT - 32] = np.log1p(v[:NFEAT - 32])
    return v


class FountainPages(keras.utils.PyDataset):
    def __init__(self, scenes, labels, batch):
        super().__init__(workers=1, use_multiprocessing=False)
        self.scenes, self.labels, self.batch = scenes, labels, batch

    def __len__(self):
        return STEPS

    def __getitem__(self, i):
        idx = [(i * self.batch + j) % len(self.scenes) for j in range(self.batch)]
        x = np.stack([parse_scene(self.scenes[k]) for k in idx])
        return x, self.labels[idx]


def make_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dropout(0.2), keras.layers.Dense(192, activation="relu"),
                          keras.layers.Dense(NCLS)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(data, **kw):
    model, timer = make_model(), StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return sec_per_step(timer.gaps)


def main():
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, NCLS, 600).astype(np.int32)
    scenes = [make_scene(rng, int(g)) for g in labels]
    pages = FountainPages(scenes, labels, BATCH)
    full = run(pages)
    compute = None
    if TRUTH:
        x, y = pages[0]
        one = tf.data.Dataset.from_tensors((x, y)).repeat()
        compute = run(one, steps_per_epoch=STEPS)
    report("input_fountainscreenplay_pydataset_scriptcoverage", full, compute)


if __name__ == "__main__":
    main()
