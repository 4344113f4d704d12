"""Predict slow CDN requests from raw access-log lines.

The log file is parsed on the fly with regular expressions inside a Python
generator that yields batches of several model inputs.
"""

import argparse
import json
import os
import re
import shutil
import tempfile
import time
import zlib
from datetime import datetime
from urllib.parse import parse_qsl, unquote, urlsplit

import numpy as np
import tensorflow as tf
import keras

N_LINES = 40_000
BATCH_SIZE = 256
STEPS_PER_EPOCH = 60
EPOCHS = 3
PATH_LEN = 12
UA_LEN = 8
NGRAM_LEN = 64
VOCAB = 4096
LR = 1e-3

LOG_RE = re.compile(
    r"(?P<ip>\d+\.\d+\.\d+\.\d+) - (?P<user>\S+) \[(?P<day>\d+)/(?P<mon>\w+)/(?P<year>\d+):"
    r'(?P<h>\d+):(?P<m>\d+):(?P<s>\d+) [+-]\d+\] "(?P<method>[A-Z]+) (?P<path>\S+) '
    r'HTTP/(?P<ver>[\d.]+)" (?P<status>\d{3}) (?P<size>\d+) "(?P<ref>[^"]*)" '
    r'"(?P<ua>[^"]*)" rt=(?P<rt>[\d.]+) cache=(?P<cache>\w+) pop=(?P<pop>\w+)'
)
TOKEN_RE = re.compile(r"[A-Za-z]+|\d+")
METHODS = {"GET": 1, "POST": 2, "HEAD": 3, "PUT": 4, "DELETE": 5, "OPTIONS": 6}
CACHE = {"HIT": 1, "MISS": 2, "EXPIRED": 3, "BYPASS": 4}
POPS = ["fra", "ams", "lhr", "iad", "sjc", "nrt", "sin", "gru"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def write_log(path, seed=0):
    rng = np.random.default_rng(seed)
    sections = ["static", "img", "video", "api", "assets", "fonts", "blog", "shop"]
    exts = ["js", "css", "png", "jpg", "mp4", "json", "woff2", "html"]
    agents = [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/121.0 Safari/537.36",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 Mobile",
        "curl/8.4.0",
        "Googlebot/2.1 (+http://www.google.com/bot.html)",
        "okhttp/4.12.0",
    ]
    with open(path, "w") as f:
        for i in range(N_LINES):
            sec = rng.choice(sections)
            ext = rng.choice(exts)
            cache = rng.choice(list(CACHE))
            size = int(rng.lognormal(9, 2))
            rt = rng.exponential(0.05) + (0.3 if cache == "MISS" else 0) + size / 5e7
            ip = ".".join(str(v) for v in rng.integers(1, 255, 4))
            path_s = f"/{sec}/v{rng.integers(1, 9)}/{rng.integers(0, 5000)}/item_{rng.integers(0, 300)}.{ext}"
            if rng.random() < 0.3:
                path_s += f"?w={rng.integers(100, 2000)}&q={rng.integers(50, 100)}"
            f.write(
                f"{ip} - - [{rng.integers(1, 28):02d}/{MONTHS[rng.integers(12)]}/2025:"
                f"{rng.integers(24):02d}:{rng.integers(60):02d}:{rng.integers(60):02d} +0000] "
                f'"{rng.choice(list(METHODS))} {path_s} HTTP/1.1" {rng.choice([200, 200, 206, 304, 404, 500])} '
                f'{size} "https://example.com/{rng.choice(sections)}" "{rng.choice(agents)}" '
                f"rt={rt:.3f} cache={cache} pop={rng.choice(POPS)}\n"
            )


def hash_tokens(text, length):
    ids = [zlib.crc32(tok.lower().encode()) % (VOCAB - 1) + 1 for tok in TOKEN_RE.findall(text)]
    ids = ids[:length] + [0] * max(0, length - len(ids))
    return ids


def char_ngrams(text, n=3, length=NGRAM_LEN):
    text = f"^{text}$"
    ids = [zlib.crc32(text[i : i + n].encode()) % (VOCAB - 1) + 1 for i in range(len(text) - n + 1)]
    ids = ids[:length] + [0] * max(0, length - len(ids))
    return ids


def parse_line(line):
    m = LOG_RE.match(line)
    if m is None:
        return None
    g = m.groupdict()
    ts = datetime.strptime(
        f"{g['day']}/{g['mon']}/{g['year']}:{g['h']}:{g['m']}:{g['s']}", "%d/%b/%Y:%H:%M:%S"
    )
    url = urlsplit(unquote(g["path"]))
    params = dict(parse_qsl(url.query))
    hour = ts.hour + ts.minute / 60.0
    numeric = [
        np.log1p(float(g["size"])) / 20.0,
        np.sin(2 * np.pi * hour / 24),
        np.cos(2 * np.pi * hour / 24),
        int(g["status"]) / 600.0,
        float(params.get("w", 0)) / 2000.0,
        ts.weekday() / 6.0,
        url.path.count("/") / 10.0,
        len(url.path) / 100.0,
        float(g["ref"].startswith("https")),
        float(params.get("q", 0)) / 100.0,
    ]
    return {
        "method": METHODS.get(g["method"], 0),
        "cache": CACHE.get(g["cache"], 0),
        "pop": POPS.index(g["pop"]) + 1 if g["pop"] in POPS else 0,
        "path_tokens": hash_tokens(url.path, PATH_LEN),
        "path_ngrams": char_ngrams(url.path.lower()),
        "ua_tokens": hash_tokens(g["ua"], UA_LEN),
        "ua_ngrams": char_ngrams(g["ua"].lower(), n=4, length=96),
        "numeric": numeric,
    }, float(float(g["rt"]) > 0.25)


def log_batches(path):
    while True:
        with open(path) as f:
            rows, labels = [], []
            for line in f:
                parsed = parse_line(line)
                if parsed is None:
                    continue
                rows.append(parsed[0])
                labels.append(parsed[1])
                if len(rows) == BATCH_SIZE:
                    yield collate(rows), np.array(labels, dtype=np.float32)
                    rows, labels = [], []


def collate(rows):
    return {
        "method": np.array([r["method"] for r in rows], dtype=np.int32),
        "cache": np.array([r["cache"] for r in rows], dtype=np.int32),
        "pop": np.array([r["pop"] for r in rows], dtype=np.int32),
        "path_tokens": np.array([r["path_tokens"] for r in rows], dtype=np.int32),
        "path_ngrams": np.array([r["path_ngrams"] for r in rows], dtype=np.int32),
        "ua_tokens": np.array([r["ua_tokens"] for r in rows], dtype=np.int32),
        "ua_ngrams": np.array([r["ua_ngrams"] for r in rows], dtype=np.int32),
        "numeric": np.array([r["numeric"] for r in rows], dtype=np.float32),
    }


def build_model():
    method = keras.Input((), name="method", dtype="int32")
    cache = keras.Input((), name="cache", dtype="int32")
    pop = keras.Input((), name="pop", dtype="int32")
    path_tokens = keras.Input((PATH_LEN,), name="path_tokens", dtype="int32")
    ua_tokens = keras.Input((UA_LEN,), name="ua_tokens", dtype="int32")
    path_ngrams = keras.Input((NGRAM_LEN,), name="path_ngrams", dtype="int32")
    ua_ngrams = keras.Input((96,), name="ua_ngrams", dtype="int32")
    numeric = keras.Input((10,), name="numeric")
    tok_emb = keras.layers.Embedding(VOCAB, 64)
    p = tok_emb(path_tokens)
    p = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(p)
    p = keras.layers.GlobalMaxPooling1D()(p)
    g = keras.layers.Embedding(VOCAB, 32)(path_ngrams)
    g = keras.layers.GlobalAveragePooling1D()(g)
    ua = keras.layers.Embedding(VOCAB, 32)(ua_ngrams)
    ua = keras.layers.GlobalAveragePooling1D()(ua)
    u = keras.layers.GlobalAveragePooling1D()(tok_emb(ua_tokens))
    cats = [
        keras.layers.Embedding(8, 8)(method),
        keras.layers.Embedding(8, 8)(cache),
        keras.layers.Embedding(10, 8)(pop),
    ]
    x = keras.layers.Concatenate()([p, g, u, ua, numeric] + cats)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(
        [method, cache, pop, path_tokens, path_ngrams, ua_tokens, ua_ngrams, numeric], out
    )
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="binary_crossentropy",
        metrics=["accuracy", keras.metrics.AUC(name="auc")],
        steps_per_execution=4,
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self, steps_per_call):
        super().__init__()
        self.steps_per_call = steps_per_call
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend((np.diff(times) / self.steps_per_call).tolist())
        skip_calls = max(1, skip // self.steps_per_call)
        return float(np.mean(durations[skip_calls:]))


def train(data):
    model = build_model()
    timer = StepTimer(4)
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u23_input_logparse_")
    try:
        log_path = os.path.join(workdir, "access.log")
        write_log(log_path)
        print(f"wrote {N_LINES} log lines to {log_path}")
        full = train(log_batches(log_path))
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full={full * 1000:.1f} ms/step"
        if args.truth:
            batch = next(log_batches(log_path))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
        print(f"cdn_access: {summary} steps/s={1.0 / full:.2f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
