"""Patent claim routing to CPC sections: claim texts live in a JSON-lines file
on disk.  A Python generator, wrapped in tf.data.Dataset.from_generator,
normalises each claim and tokenises it with a hand-written greedy
longest-match WordPiece tokenizer; the padded id batches are iterated in a
Python loop that runs a @tf.function GradientTape step."""
import os, sys, json, time, shutil, tempfile, unicodedata, re
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, NDOC, SEQ, NCLS = 32, 420, 1500, 256, 8
STEMS = ("electr magnet semiconduct transist polymer catalyt pharmac compos vehic engin "
         "turbin rotor valv sens signal process comput memor network wireless antenn "
         "optic laser lens fluid pump heat exchang batter electrod anod cathod "
         "substrat layer coat adhes fabric fibr textil") .split()
SUFFIXES = ["", "ic", "al", "ing", "ed", "or", "ors", "ation", "ive", "ity", "ically", "ure"]


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_vocab():
    vocab = ["[PAD]", "[UNK]", "[CLS]"] + [s for s in STEMS] + ["##" + x for x in SUFFIXES if x]
    vocab += list("abcdefghijklmnopqrstuvwxyz0123456789") + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    vocab += "the a an of to and wherein said comprising claim first second further configured".split()
    return {w: i for i, w in enumerate(vocab)}


def wordpiece(word, vocab):
    out, start = [], 0
    while start < len(word):
        end, cur = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                cur = vocab[piece]; break
            end -= 1
        if cur is None:
            return [vocab["[UNK]"]]
        out.append(cur); start = end
    return out


def write_claims(path, rng):
    with open(path, "w") as f:
        for k in range(NDOC):
            sec = k % NCLS
            words = []
            for _ in range(int(rng.integers(300, 450))):
                if rng.random() < 0.5:
                    st = STEMS[(sec * 4 + int(rng.integers(0, 6))) % len(STEMS)]
                else:
                    st = STEMS[int(rng.integers(0, len(STEMS)))]
                words.append(st + SUFFIXES[int(rng.integers(0, len(SUFFIXES)))])
                if rng.random() < 0.3:
                    words.append(["said", "wherein", "comprising", "the", "a", "first", "second"][int(rng.integers(0, 7))])
            text = "1. A device, comprising: " + " ".join(words) + ". \u00c9lectrode n\u00ba%d" % k
            f.write(json.dumps({"pub": "US%08dB2" % k, "cpc": "ABCDEFGH"[sec], "claim": text}) + "\n")


def build():
    keras.utils.set_random_seed(13)
    ids = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(256, 32)(ids)
    h = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    return keras.Model(ids, keras.layers.Dense(NCLS)(h))


def train(model, ds_iter):
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for s in range(STEPS):
        x, y = next(ds_iter)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_wordpiece_tapeloop_patents_")
    try:
        rng = np.random.default_rng(46)
        path = os.path.join(tmp, "claims.jsonl")
        write_claims(path, rng)
        vocab = make_vocab()

        def gen():
            while True:
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        rec = json.loads(line)
                        text = unicodedata.normalize("NFKD", rec["claim"]).encode("ascii", "ignore").decode().lower()
                        ids = [vocab["[CLS]"]]
                        for w in re.findall(r"[a-z0-9]+", text):
                            ids.extend(wordpiece(w, vocab))
                        ids = (ids + [0] * SEQ)[:SEQ]
                        yield np.array(ids, np.int32), np.int32(ord(rec["cpc"]) - 65)

        sig = (tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((), tf.int32))
        ds = tf.data.Dataset.from_generator(gen, output_signature=sig).shuffle(256, seed=1).batch(BATCH).prefetch(2)
        t0 = time.perf_counter()
        it = iter(ds)
        full, loss = train(build(), it)
        emit("steps_per_second", 1.0 / full)
        msg = "loss=%.4f sec/step=%.4f" % (loss, full)
        if truth:
            xb, yb = next(it)
            def same():
                while True:
                    yield xb, yb
            comp, _ = train(build(), same())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_wordpiece_tapeloop_patents: %s wall_train=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
