"""Article-category classifier over a MediaWiki dump split into text shards.

Articles in raw wikitext (templates, infobox tables, wiki links, <ref> tags,
bold/italic quotes) are written as shard files; tf.data interleaves one
from_generator reader per shard, each parsing the markup by hand into plain
words, hashes the words to ids, and batches padded sequences for model.fit.
"""
import os, sys, json, time, tempfile, shutil, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 32, 150, 2
SEQ, VOCAB, NCLS = 256, 20000, 5
NSHARDS, PER_SHARD = 8, 150
CATS = ["biology", "history", "sports", "music", "geography"]


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


def write_shards(root):
    rng = random.Random(SEED)
    common = ["the", "was", "born", "in", "city", "river", "team", "album", "species", "empire",
              "during", "century", "known", "for", "its", "first", "league", "band", "genus", "war"]
    paths = []
    for s in range(NSHARDS):
        arts = []
        for a in range(PER_SHARD):
            lab = (s * PER_SHARD + a) % NCLS
            topic = [CATS[lab][:4] + t for t in ("ia", "on", "us", "ed", "ar")]
            parts = [f"{lab}\n{{{{Infobox {CATS[lab]}\n| name = Item {a}\n| image = File:X{a}.jpg\n"
                     f"| founded = {{{{start date|{1800 + a}|1|1}}}}\n}}}}\n"]
            for p in range(6):
                parts.append(f"== Section {p} ==\n" if p % 3 == 0 else "")
                ws = []
                for _ in range(45):
                    w = rng.choice(topic) if rng.random() < 0.25 else rng.choice(common)
                    r = rng.random()
                    if r < 0.08:
                        w = f"[[{w.title()} (disambiguation)|{w}]]"
                    elif r < 0.12:
                        w = f"'''{w}'''"
                    elif r < 0.15:
                        w = f"''{w}''"
                    elif r < 0.17:
                        w = f"{w}<ref name=\"r{p}\">{{{{cite web|url=http://x.org/{w}|title={w}}}}}</ref>"
                    ws.append(w)
                parts.append(" ".join(ws) + ".\n")
            parts.append("{| class=\"wikitable\"\n|-\n! Year !! Value\n|-\n| 1990 || 12\n|}\n[[Category:"
                         + CATS[lab].title() + "]]\n")
            arts.append("".join(parts))
        path = os.path.join(root, f"enwiki-shard-{s:03d}.txt")
        with open(path, "w") as f:
            f.write("\f".join(arts))
        paths.append(path)
    return paths


def strip_wikitext(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("{{", i) or text.startswith("{|", i):
            depth, i = 1, i + 2
            while depth and i < n:
                if text.startswith("{{", i) or text.startswith("{|", i):
                    depth += 1; i += 2
                elif text.startswith("}}", i) or text.startswith("|}", i):
                    depth -= 1; i += 2
                else:
                    i += 1
        elif text.startswith("[[", i):
            j = text.index("]]", i)
            inner = text[i + 2:j]
            if not inner.startswith("Category:"):
                out.append(inner.rsplit("|", 1)[-1])
            i = j + 2
        elif text.startswith("<ref", i):
            j = text.index("</ref>", i)
            i = j + 6
        elif text[i] in "'=":
            i += 1
        else:
            out.append(text[i].lower()); i += 1
    return "".join(out)


def encode(article):
    label, body = article.split("\n", 1)
    words = strip_wikitext(body).replace(".", " ").split()
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in words][:SEQ]
    return np.asarray(ids + [0] * (SEQ - len(ids)), np.int32), np.int32(label)


def read_shard(path):
    with open(path.decode(), encoding="utf-8") as f:
        for art in f.read().split("\f"):
            yield encode(art)


def make_dataset(paths):
    sig = (tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((), tf.int32))
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=SEED).repeat()
    ds = files.interleave(lambda p: tf.data.Dataset.from_generator(read_shard, args=(p,), output_signature=sig),
                          cycle_length=4, block_length=8)
    return ds.shuffle(256, seed=SEED).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 48)(inp)
    x = keras.layers.Conv1D(48, 5, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(NCLS, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_input_wikitext_interleave_encyclopedia_")
    try:
        paths = write_shards(tmp)
        ds = make_dataset(paths)
        full = train(ds)
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step"
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"input_wikitext_interleave_encyclopedia: {NSHARDS * PER_SHARD} articles, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
