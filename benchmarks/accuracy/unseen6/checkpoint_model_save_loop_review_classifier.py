"""Product-review sentiment classifier, trained in rounds with a full model save after each."""

import collections
import os
import re
import tempfile

import keras
import numpy as np

VOCAB, MAXLEN, REVIEWS, ROUNDS, KEEP = 150_000, 120, 6000, 20, 3
WORD = re.compile(r"[a-z']+|[!?.]")
GOOD = "great love excellent perfect works fast sturdy recommend happy beautiful".split()
BAD = "broken refund awful slow cheap returned disappointed never worse leaking".split()


def make_reviews(seed=0):
    rng = np.random.default_rng(seed)
    filler = [f"w{i}" for i in range(VOCAB)]
    texts, labels = [], []
    for _ in range(REVIEWS):
        label = int(rng.integers(2))
        words = [filler[int(i)] for i in rng.zipf(1.3, int(rng.integers(20, MAXLEN))) % VOCAB]
        for _ in range(int(rng.integers(1, 5))):
            words.insert(int(rng.integers(len(words))), str(rng.choice(GOOD if label else BAD)))
        texts.append(" ".join(words).capitalize() + rng.choice(["!", ".", "?"]))
        labels.append(label)
    return texts, np.array(labels, np.float32)


def tokenise(texts):
    counts = collections.Counter(w for t in texts for w in WORD.findall(t.lower()))
    index = {w: i + 2 for i, (w, _) in enumerate(counts.most_common(VOCAB - 2))}
    ids = np.zeros((len(texts), MAXLEN), np.int32)
    for row, text in enumerate(texts):
        tokens = [index.get(w, 1) for w in WORD.findall(text.lower())][:MAXLEN]
        ids[row, : len(tokens)] = tokens
    return ids


texts, labels = make_reviews()
ids = tokenise(texts)

model = keras.Sequential(
    [
        keras.Input((MAXLEN,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 192),
        keras.layers.Conv1D(256, 3, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile(keras.optimizers.Adam(1e-3), "binary_crossentropy", metrics=["accuracy"])

folder = tempfile.mkdtemp(prefix="review_rounds_")
saved = []
for round_ in range(ROUNDS):
    start = round_ * 64 % REVIEWS
    history = model.fit(
        ids[start : start + 64], labels[start : start + 64], batch_size=64, epochs=1, verbose=0
    )
    path = os.path.join(folder, f"review_classifier_round_{round_:02d}.keras")
    model.save(path)
    saved.append(path)
    if len(saved) > KEEP:
        os.remove(saved.pop(0))
    loss = history.history["loss"][-1]
    print(f"round {round_} loss {loss:.3f} saved {os.path.getsize(path) >> 20} MiB")

for path in saved:
    os.remove(path)
os.rmdir(folder)
