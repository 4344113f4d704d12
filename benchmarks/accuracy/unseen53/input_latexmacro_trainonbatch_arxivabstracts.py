"""Subject-category classifier for preprint abstracts written in LaTeX.

LaTeX abstract sources with \\newcommand definitions, inline math, \\cite and
font commands are generated in memory; the Python training loop expands the
user macros, collapses math to a placeholder and strips commands with a
character scanner, builds hashed unigram+bigram vectors, and calls
model.train_on_batch on each batch.
"""
import os, sys, json, time, tempfile, shutil, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS = 32, 520
DIM, NCLS = 8192, 6
NDOCS = 2400
CATS = ["hep-th", "cs.LG", "math.AP", "q-bio.NC", "astro-ph.GA", "cond-mat.str-el"]


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_sources():
    rng = random.Random(SEED)
    common = ["we", "show", "that", "the", "model", "admits", "a", "solution", "in", "regime",
              "using", "novel", "bound", "on", "energy", "and", "prove", "stability", "results"]
    topical = {c: [c.split(".")[-1].replace("-", "") + s for s in ("field", "loss", "norm", "spike", "halo", "spin")]
               for c in CATS}
    docs, labels = [], []
    for i in range(NDOCS):
        lab = i % NCLS
        cat = CATS[lab]
        src = [r"\newcommand{\R}{\mathbb{R}}", r"\newcommand{\vect}[1]{\mathbf{#1}}",
               r"\newcommand{\eps}{\varepsilon}", r"\begin{abstract}"]
        for _ in range(150):
            r = rng.random()
            if r < 0.25:
                src.append(rng.choice(topical[cat]))
            elif r < 0.33:
                src.append(r"$\vect{x} \in \R^{%d}, \|x\|\le\eps$" % rng.randint(2, 9))
            elif r < 0.38:
                src.append(r"\emph{" + rng.choice(common) + "}")
            elif r < 0.41:
                src.append(r"\cite{ref%d,ref%d}" % (rng.randint(1, 99), rng.randint(1, 99)))
            elif r < 0.44:
                src.append(r"\vect{" + rng.choice(common) + "}")
            else:
                src.append(rng.choice(common))
        src.append(r"\end{abstract}")
        docs.append(" ".join(src)); labels.append(lab)
    return docs, np.asarray(labels, np.int32)


def read_group(s, i):
    depth, j = 1, i + 1
    while depth:
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
        j += 1
    return s[i + 1:j - 1], j


def expand_macros(src):
    macros = {}
    body = []
    i, n = 0, len(src)
    while i < n:
        if src.startswith(r"\newcommand", i):
            name, i = read_group(src, i + 11)
            nargs = 0
            if src[i] == "[":
                nargs = int(src[i + 1]); i += 3
            repl, i = read_group(src, i)
            macros[name[1:]] = (nargs, repl)
        else:
            body.append(src[i]); i += 1
    return "".join(body), macros


def latex_to_words(src):
    text, macros = expand_macros(src)
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "$":
            j = text.index("$", i + 1)
            out.append(" MATH "); i = j + 1
        elif c == "\\":
            j = i + 1
            while j < n and text[j].isalpha():
                j += 1
            name = text[i + 1:j]
            if name in macros:
                nargs, repl = macros[name]
                for a in range(nargs):
                    arg, j = read_group(text, j)
                    repl = repl.replace(f"#{a + 1}", arg)
                out.append(" " + repl + " ")
            elif name == "cite":
                _, j = read_group(text, j); out.append(" CITE ")
            elif name in ("begin", "end"):
                _, j = read_group(text, j)
            i = j
        elif c in "{}":
            i += 1
        else:
            out.append(c.lower()); i += 1
    return "".join(out).split()


def featurize(src):
    words = latex_to_words(src)
    v = np.zeros(DIM, np.float32)
    for a, b in zip(words, words[1:] + ["</s>"]):
        v[zlib.crc32(a.encode()) % DIM] += 1.0
        v[zlib.crc32((a + " " + b).encode()) % DIM] += 1.0
    return np.log1p(v)


def make_batch(docs, labels, rng):
    sel = rng.integers(0, len(docs), BATCH)
    return np.stack([featurize(docs[k]) for k in sel]), labels[sel]


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((DIM,)),
                          keras.layers.Dense(192, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(NCLS, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


def train(batches):
    model = build_model()
    times = []
    for s in range(STEPS):
        x, y = batches()
        loss = float(model.train_on_batch(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u53_input_latexmacro_trainonbatch_arxivabstracts_")
    try:
        docs, labels = make_sources()
        rng = np.random.default_rng(SEED)
        full, loss = train(lambda: make_batch(docs, labels, rng))
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            xb, yb = make_batch(docs, labels, np.random.default_rng(SEED))
            comp, _ = train(lambda: (xb, yb))
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"input_latexmacro_trainonbatch_arxivabstracts: {len(docs)} abstracts, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
