"""Blog-post tag classifier for a static-site generator (Jekyll/Hugo style).

Markdown posts with a YAML-like front matter block are written to disk; a Python
generator wrapped in tf.data.Dataset.from_generator reads each file, parses the
front matter by hand, strips the Markdown markup character by character,
hashes the words and feeds padded id sequences to model.fit.
"""
import os, sys, json, time, tempfile, shutil, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 32, 200, 2
SEQ, VOCAB, NCLS = 256, 20000, 6
NPOSTS = 800
TAGS = ["python", "devops", "ml", "frontend", "databases", "security"]


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


def write_posts(root):
    rng = random.Random(SEED)
    words = ["deploy", "query", "index", "cluster", "token", "render", "layout", "kernel",
             "cache", "schema", "pipeline", "gradient", "container", "firewall", "session",
             "async", "component", "replica", "tensor", "patch", "exploit", "vector"]
    paths = []
    for i in range(NPOSTS):
        tag = i % NCLS
        topic = [w + TAGS[tag][:3] for w in words[tag * 3: tag * 3 + 4]]
        lines = ["---", f"title: \"Notes on {rng.choice(words)} #{i}\"",
                 f"date: 2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                 f"tags: [{TAGS[tag]}, {rng.choice(TAGS)}]",
                 f"author: writer{i % 17}", "draft: false", "---", ""]
        for p in range(14):
            lines.append(f"## Section {p}" if p % 4 == 0 else "")
            sent = []
            for _ in range(40):
                w = rng.choice(topic) if rng.random() < 0.3 else rng.choice(words)
                r = rng.random()
                if r < 0.08:
                    w = f"**{w}**"
                elif r < 0.14:
                    w = f"[{w}](https://example.org/{w})"
                elif r < 0.18:
                    w = f"`{w}()`"
                sent.append(w)
            lines.append(" ".join(sent) + ".")
            if p % 5 == 2:
                lines += ["```python", f"x = {rng.choice(words)}({p})", "```"]
        path = os.path.join(root, f"{i:05d}-post.md")
        with open(path, "w") as f:
            f.write("\n".join(lines))
        paths.append(path)
    return paths


def parse_front_matter(text):
    meta = {}
    if not text.startswith("---"):
        return meta, text
    end = text.index("\n---", 3)
    for line in text[4:end].splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            v = v.strip().strip('"')
            if v.startswith("[") and v.endswith("]"):
                v = [s.strip() for s in v[1:-1].split(",")]
            meta[k.strip()] = v
    return meta, text[end + 4:]


def strip_markdown(body):
    out = []
    in_code = False
    for line in body.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = line.lstrip("#").strip()
        buf = []
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "*" or c == "`" or c == "_":
                i += 1; continue
            if c == "[":
                j = line.find("]", i)
                buf.append(line[i + 1:j])
                if j + 1 < n and line[j + 1] == "(":
                    j = line.find(")", j)
                i = j + 1; continue
            buf.append(c.lower())
            i += 1
        out.append("".join(buf))
    return " ".join(out)


def encode(path):
    with open(path, encoding="utf-8") as f:
        meta, body = parse_front_matter(f.read())
    words = strip_markdown(body).replace(".", " ").replace("(", " ").replace(")", " ").split()
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in words][:SEQ]
    ids += [0] * (SEQ - len(ids))
    return np.asarray(ids, np.int32), TAGS.index(meta["tags"][0])


def make_dataset(paths):
    def gen():
        rng = random.Random(SEED)
        order = list(paths)
        while True:
            rng.shuffle(order)
            for p in order:
                yield encode(p)
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


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
    tmp = tempfile.mkdtemp(prefix="u53_input_frontmatter_fromgen_blogposts_")
    try:
        paths = write_posts(tmp)
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
        print(f"input_frontmatter_fromgen_blogposts: {NPOSTS} posts, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
