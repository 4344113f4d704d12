"""Character-level sentiment model for multilingual marketplace reviews.

Raw review strings (Latin with accents, Cyrillic, CJK, emoji) sit in memory; a
serial tf.data map normalises each review with tf.strings ops (lower, regex
clean-up, substr), decodes it to Unicode code points with
tf.strings.unicode_decode, folds code points into a character vocabulary and
computes word-length statistics; examples are then padded_batch'ed into fit.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 64
STEPS = 200
EPOCHS = 3
N_REVIEWS = 8000
MAXLEN = 400
VOCAB = 0x250 + 512
NGRAM_BUCKETS = 8192

POS = ["great", "excellent", "très bon", "génial", "отлично", "хорошо", "很好", "满意", "süper", "perfekt", "👍", "😍"]
NEG = ["terrible", "broken", "nul", "décevant", "плохо", "ужасно", "很差", "失望", "kötü", "kaputt", "👎", "😡"]
NEU = ["the", "package", "arrived", "le", "colis", "est", "товар", "пришел", "快递", "商品", "das", "Paket", "and",
       "price", "größe", "ñandú", "qualité", "color", "delivery", "días", "çok", "item", "ok", "…", "!!", "?!"]


def make_reviews(seed=0):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(N_REVIEWS):
        y = int(rng.integers(0, 3))
        n = int(rng.integers(40, 90))
        words = list(rng.choice(NEU, size=n))
        k = int(rng.integers(1, 6))
        src = POS if y == 2 else NEG if y == 0 else NEU
        for _ in range(k):
            words.insert(int(rng.integers(0, len(words))), str(rng.choice(src)))
        text = " ".join(w.upper() if rng.random() < 0.1 else w for w in words)
        texts.append(text.replace(" ,", ",") + rng.choice([".", "!!!", " :)", "?"]))
        labels.append(y)
    return np.array(texts, dtype=object), np.array(labels, np.int32)


def preprocess(text, label):
    t = tf.strings.lower(text, encoding="utf-8")
    t = tf.strings.regex_replace(t, r"[[:punct:]]+", " ")
    t = tf.strings.regex_replace(t, r"\s+", " ")
    t = tf.strings.strip(t)
    t = tf.strings.substr(t, 0, MAXLEN, unit="UTF8_CHAR")
    cps = tf.strings.unicode_decode(t, "UTF-8", errors="replace", replacement_char=0xFFFD)
    ids = tf.where(cps < 0x250, cps, 0x250 + tf.math.floormod(cps, 512))
    chars = tf.strings.unicode_split(t, "UTF-8")
    bigrams = tf.strings.ngrams(chars, 2, separator="")
    trigrams = tf.strings.ngrams(chars, 3, separator="")
    bg_ids = tf.strings.to_hash_bucket_fast(bigrams, NGRAM_BUCKETS)
    tg_ids = tf.strings.to_hash_bucket_fast(trigrams, NGRAM_BUCKETS)
    words = tf.strings.split(t)
    wlen = tf.cast(tf.strings.length(words, unit="UTF8_CHAR"), tf.float32)
    blen = tf.cast(tf.strings.length(words), tf.float32)
    non_ascii = tf.reduce_sum(tf.cast(cps > 127, tf.float32))
    stats = tf.stack([tf.reduce_mean(wlen) / 10.0, tf.reduce_max(wlen) / 20.0,
                      tf.reduce_mean(blen / wlen), non_ascii / tf.cast(tf.size(cps), tf.float32)])
    return (ids, bg_ids, tg_ids, stats), label


def make_dataset(texts, labels):
    ds = tf.data.Dataset.from_tensor_slices((texts, labels)).shuffle(4096, seed=0).repeat()
    ds = ds.map(preprocess)
    return ds.padded_batch(BATCH, padded_shapes=(([MAXLEN], [MAXLEN - 1], [MAXLEN - 2], [4]), []))


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    chars = keras.Input((MAXLEN,), dtype="int32")
    bigrams = keras.Input((MAXLEN - 1,), dtype="int64")
    trigrams = keras.Input((MAXLEN - 2,), dtype="int64")
    stats = keras.Input((4,))
    h = keras.layers.Embedding(VOCAB, 8)(chars)
    h = keras.layers.Conv1D(16, 5, strides=2, activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    ng = keras.layers.Embedding(NGRAM_BUCKETS, 8)
    b = keras.layers.GlobalAveragePooling1D()(ng(bigrams))
    t = keras.layers.GlobalAveragePooling1D()(ng(trigrams))
    h = keras.layers.Concatenate()([h, b, t, stats])
    h = keras.layers.Dense(32, activation="relu")(h)
    return keras.Model([chars, bigrams, trigrams, stats], keras.layers.Dense(3)(h))


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_input_unicodechars_reviews_")
    try:
        t0 = time.perf_counter()
        texts, labels = make_reviews()
        full, hist = train(make_dataset(texts, labels))
        emit("steps_per_second", 1.0 / full)
        msg = "input_unicodechars_reviews: %.1f ms/step, acc %.3f" % (full * 1e3, hist["accuracy"][-1])
        if args.truth:
            batch = next(iter(make_dataset(texts, labels)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
