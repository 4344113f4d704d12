# Predicts whether a web request was slow from its access-log line. The lines are parsed in
# Python (regex, user-agent and path tokens hashed into a bag of features) inside a generator
# wrapped with tf.data.Dataset.from_generator, then batched.
import re
import zlib

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

HASH_DIM = 1024
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"]
AGENTS = [
    "Mozilla/5.0 (X11; Linux x86_64) Firefox/118.0",
    "curl/8.1.2",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Safari/604.1",
    "python-requests/2.31",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
]
WORDS = (
    "api v1 v2 users orders items search static img cart checkout login logout admin report "
    "export health metrics"
).split()
LINE = re.compile(
    r"(?P<ip>\d+\.\d+\.\d+\.\d+) - - \[(?P<day>\d+)/(?P<mon>\w+)/(?P<year>\d+):(?P<h>\d+):"
    r'(?P<m>\d+):(?P<s>\d+) \+0000\] "(?P<method>\w+) (?P<path>\S+) HTTP/1\.1" (?P<status>\d+) '
    r'(?P<size>\d+) "(?P<ref>[^"]*)" "(?P<agent>[^"]*)" (?P<ms>\d+)'
)


def make_logs(n, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        parts = rng.choice(WORDS, size=rng.integers(1, 6))
        path = "/" + "/".join(parts) + f"?page={rng.integers(50)}&id={rng.integers(10**6)}"
        ms = int(rng.gamma(2.0, 40.0) * (3 if "export" in parts else 1))
        lines.append(
            f"10.{rng.integers(256)}.{rng.integers(256)}.{rng.integers(256)} - - "
            f"[{rng.integers(1, 29):02d}/Nov/2026:{rng.integers(24):02d}:{rng.integers(60):02d}:"
            f'{rng.integers(60):02d} +0000] "{METHODS[rng.integers(5)]} {path} HTTP/1.1" '
            f"{rng.choice([200, 200, 200, 301, 404, 500])} {rng.integers(100, 90000)} "
            f'"https://shop.example.com/{rng.choice(WORDS)}" "{AGENTS[rng.integers(5)]}" {ms}'
        )
    return lines


logs = make_logs(8000)


def parse(line):
    match = LINE.match(line)
    features = np.zeros(HASH_DIM + 8, np.float32)
    path, _, query = match["path"].partition("?")
    tokens = [t for t in path.split("/") if t]
    tokens += [f"q:{kv.split('=')[0]}" for kv in query.split("&") if kv]
    tokens += [f"a:{w.lower()}" for w in re.findall(r"[A-Za-z]+", match["agent"])]
    tokens += [f"r:{w}" for w in match["ref"].split("/")[3:]]
    tokens += [f"{a}>{b}" for a, b in zip(tokens, tokens[1:], strict=False)]
    for token in tokens:
        features[zlib.crc32(token.encode()) % HASH_DIM] += 1.0
    features[HASH_DIM] = int(match["h"]) / 23.0
    features[HASH_DIM + 1] = METHODS.index(match["method"]) / 4.0
    features[HASH_DIM + 2] = int(match["status"]) / 500.0
    features[HASH_DIM + 3] = np.log1p(int(match["size"])) / 12.0
    features[HASH_DIM + 4] = len(tokens) / 30.0
    features[HASH_DIM + 5] = int(match["day"]) / 28.0
    features[HASH_DIM + 6] = sum(int(o) for o in match["ip"].split(".")) / 1000.0
    features[HASH_DIM + 7] = len(match["path"]) / 100.0
    return features, np.float32(int(match["ms"]) > 120)


def examples():
    order = np.random.default_rng(1)
    while True:
        for i in order.permutation(len(logs)):
            yield parse(logs[i])


def dataset():
    signature = (
        tf.TensorSpec((HASH_DIM + 8,), tf.float32),
        tf.TensorSpec((), tf.float32),
    )
    return tf.data.Dataset.from_generator(examples, output_signature=signature).batch(64)


model = keras.Sequential(
    [
        keras.Input((HASH_DIM + 8,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 1000)
measure(model, dataset, 40)
