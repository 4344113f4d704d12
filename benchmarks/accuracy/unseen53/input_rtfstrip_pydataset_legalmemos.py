"""Practice-area classifier for a law firm's archive of RTF memos.

Memos exported from a word processor are stored as .rtf files; a
keras.utils.PyDataset reads each batch of files, strips RTF control words,
groups and hex escapes with a hand-written tokenizer, and turns the plain text
into hashed log-count bag-of-words vectors for model.fit.
"""
import os, sys, json, time, tempfile, shutil, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 32, 80, 6
DIM, NCLS = 4096, 5
NDOCS = 2560
AREAS = ["tax", "employment", "ip", "litigation", "realestate"]


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_memos(root):
    rng = random.Random(SEED)
    common = ["client", "counsel", "pursuant", "agreement", "hereby", "clause", "party",
              "court", "filing", "deadline", "liability", "statute", "review", "draft"]
    special = {a: [a + s for s in ("_claim", "_act", "_rule", "_notice", "_schedule")] for a in AREAS}
    paths, labels = [], []
    for i in range(NDOCS):
        lab = i % NCLS
        parts = [r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman Times New Roman;}{\f1\fswiss Arial;}}",
                 r"{\colortbl;\red0\green0\blue0;\red200\green0\blue0;}",
                 r"{\*\generator Riched20 10.0.19041}{\info{\author Paralegal " + str(i % 9) + r"}}",
                 r"\viewkind4\uc1\pard\sa200\sl276\slmult1\f0\fs24\lang9 "]
        for p in range(12):
            words = []
            for _ in range(45):
                w = rng.choice(special[AREAS[lab]]) if rng.random() < 0.2 else rng.choice(common)
                r = rng.random()
                if r < 0.07:
                    w = r"{\b " + w + "}"
                elif r < 0.12:
                    w = r"{\i\cf2 " + w + "}"
                elif r < 0.15:
                    w = w + r"\'e9"
                words.append(w)
            parts.append(" ".join(words) + r".\par" + "\n")
        parts.append("}")
        path = os.path.join(root, f"memo_{i:05d}.rtf")
        with open(path, "w", encoding="latin-1") as f:
            f.write("".join(parts))
        paths.append(path); labels.append(lab)
    return paths, np.asarray(labels, np.int32)


SKIP_DEST = {"fonttbl", "colortbl", "info", "generator", "stylesheet"}


def rtf_to_text(src):
    out = []
    stack = []
    skip = False
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "{":
            stack.append(skip); i += 1
        elif c == "}":
            skip = stack.pop() if stack else False; i += 1
        elif c == "\\":
            i += 1
            if i < n and src[i] == "'":
                if not skip:
                    out.append(bytes.fromhex(src[i + 1:i + 3]).decode("latin-1"))
                i += 3; continue
            if i < n and src[i] == "*":
                skip = True; i += 1; continue
            j = i
            while j < n and src[j].isalpha():
                j += 1
            word = src[i:j]
            while j < n and (src[j].isdigit() or src[j] == "-"):
                j += 1
            if j < n and src[j] == " ":
                j += 1
            if word in SKIP_DEST:
                skip = True
            elif word == "par" and not skip:
                out.append("\n")
            i = j
        else:
            if not skip and c not in "\r\n":
                out.append(c)
            i += 1
    return "".join(out)


def featurize(text):
    v = np.zeros(DIM, np.float32)
    for w in text.lower().replace(".", " ").split():
        v[zlib.crc32(w.encode()) % DIM] += 1.0
    return np.log1p(v)


class MemoDataset(keras.utils.PyDataset):
    def __init__(self, paths, labels, **kwargs):
        super().__init__(**kwargs)
        self.paths, self.labels = paths, labels
        self.order = np.random.default_rng(SEED).permutation(len(paths))
    def __len__(self):
        return len(self.paths) // BATCH
    def __getitem__(self, idx):
        sel = self.order[idx * BATCH:(idx + 1) * BATCH]
        xs = []
        for k in sel:
            with open(self.paths[k], encoding="latin-1") as f:
                xs.append(featurize(rtf_to_text(f.read())))
        return np.stack(xs), self.labels[sel]
    def on_epoch_end(self):
        np.random.default_rng(SEED + 1).shuffle(self.order)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((DIM,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dropout(0.2),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(NCLS, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(data, steps):
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_input_rtfstrip_pydataset_legalmemos_")
    try:
        paths, labels = write_memos(tmp)
        ds = MemoDataset(paths, labels)
        steps = min(STEPS, len(ds))
        full = train(ds, steps)
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step"
        if "--truth" in sys.argv:
            xb, yb = ds[0]
            comp = train(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"input_rtfstrip_pydataset_legalmemos: {len(paths)} memos, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
