"""Code-smell tagger for a code-review bot (Python snippets from pull requests).

Python source snippets are generated in memory; every step the Python training
loop lexes its batch with the standard-library tokenize module, maps token
types and hashed identifiers to ids and pads them, then calls a @tf.function
GradientTape step on the resulting arrays.
"""
import os, sys, json, time, tempfile, shutil, random, zlib, io, tokenize
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS = 32, 750
SEQ, VOCAB, NCLS = 256, 16384, 4
NSNIP = 3000
SMELLS = ["clean", "bare_except", "mutable_default", "deep_nesting"]


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_snippets():
    rng = random.Random(SEED)
    names = ["user", "order", "cfg", "row", "item", "payload", "session", "retry", "buf", "path"]
    snips, labels = [], []
    for i in range(NSNIP):
        lab = i % NCLS
        a, b, c = rng.sample(names, 3)
        lines = [f"def handle_{a}_{i}({b}, {c}={'[]' if lab == 2 else 'None'}):",
                 f'    """Process {a} for {b}."""']
        for k in range(rng.randint(4, 7)):
            lines.append(f"    {a}_{k} = {b}.get('{c}', {k}) + len(str({c}))")
        if lab == 1:
            lines += ["    try:", f"        {b}.save({a}_0)", "    except:", "        pass"]
        elif lab == 3:
            lines += [f"    for x in {b}:", "        if x:", "            for y in x:",
                      "                if y > 1:", "                    while y:", "                        y -= 1"]
        else:
            lines += ["    try:", f"        {b}.save({a}_0)", "    except ValueError as exc:",
                      "        log.warning('bad %s', exc)"]
        lines.append(f"    return {a}_0  # {rng.choice(names)}")
        snips.append("\n".join(lines) + "\n")
        labels.append(lab)
    return snips, np.asarray(labels, np.int32)


def lex(src):
    ids = []
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.INDENT:
            depth += 1
        elif tok.type == tokenize.DEDENT:
            depth -= 1
        if tok.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING):
            key = f"{tokenize.tok_name[tok.type]}:{tok.string}"
        else:
            key = f"{tokenize.tok_name[tok.type]}:{depth}"
        ids.append(1 + zlib.crc32(key.encode()) % (VOCAB - 1))
    ids = ids[:SEQ]
    return ids + [0] * (SEQ - len(ids))


def make_batch(snips, labels, rng):
    sel = rng.integers(0, len(snips), BATCH)
    x = np.asarray([lex(snips[k]) for k in sel], np.int32)
    return x, labels[sel]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 32)(inp)
    x = keras.layers.Conv1D(48, 5, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(NCLS)(x)
    return keras.Model(inp, out)


def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for s in range(STEPS):
        x, y = batches()
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u53_input_pytokenize_tapeloop_codesmells_")
    try:
        snips, labels = make_snippets()
        rng = np.random.default_rng(SEED)
        full, loss = train(lambda: make_batch(snips, labels, rng))
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            xb, yb = make_batch(snips, labels, np.random.default_rng(SEED))
            comp, _ = train(lambda: (xb, yb))
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"input_pytokenize_tapeloop_codesmells: {len(snips)} snippets, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
