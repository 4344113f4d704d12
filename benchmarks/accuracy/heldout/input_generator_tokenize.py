# A sentiment model fed by a Python generator that cleans and tokenizes raw review text
# per batch in pure Python (lower-casing, regex clean-up, vocabulary look-up, fastText-style
# hashed character trigrams) into a bag-of-features count vector.
import random
import re
import zlib

import keras
import numpy as np
from truth import measure, timed_fit

FEATURES = 8192
picker = random.Random(0)
letters = "abcdefghijklmnopqrstuvwxyz"
words = ["".join(picker.choices(letters, k=picker.randint(2, 9))) for _ in range(8000)]
vocabulary = {word: index + 2 for index, word in enumerate(words[:6000])}
reviews = [
    " ".join(
        picker.choice(words).capitalize() if picker.random() < 0.1 else picker.choice(words)
        for _ in range(picker.randint(150, 300))
    )
    + picker.choice([" !", ".", " ?!", " :)"])
    for _ in range(2000)
]
PUNCTUATION = re.compile(r"[^a-z0-9\s]")


def tokenize(text):
    tokens = []
    for word in PUNCTUATION.sub(" ", text.lower()).split():
        tokens.append(vocabulary.get(word, 1))
        marked = f"<{word}>"
        for i in range(len(marked) - 2):
            tokens.append(6002 + zlib.crc32(marked[i : i + 3].encode()) % (FEATURES - 6002))
    return np.log1p(np.bincount(tokens, minlength=FEATURES).astype(np.float32))


def batches(batch_size=64):
    order = random.Random(1)
    while True:
        chosen = order.sample(range(len(reviews)), batch_size)
        x = np.stack([tokenize(reviews[i]) for i in chosen])
        y = np.array([[len(reviews[i]) % 2] for i in chosen], np.float32)
        yield x, y


model = keras.Sequential(
    [
        keras.Input((FEATURES,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(), 220)
measure(model, batches, 25)
