"""Predict slow requests (latency class) from raw web-server access-log lines.

Log lines are written to a text file; a Python generator reads them, parses each
line with a regular expression plus datetime.strptime, builds a feature vector in
pure Python and yields numpy batches straight into model.fit.
"""
import argparse, json, os, re, shutil, tempfile, time, zlib, random
from datetime import datetime
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 256
STEPS = 250
EPOCHS = 3
N_LINES = 40000
HASH_DIM = 256
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]
AGENTS = ["Mozilla/5.0 (X11; Linux x86_64) Firefox/118.0", "curl/8.1.2",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0) Safari/604.1",
          "python-requests/2.31", "Googlebot/2.1 (+http://www.google.com/bot.html)"]
LINE_RE = re.compile(
    r'^(?P<ip>\d{1,3}(?:\.\d{1,3}){3}) \S+ (?P<user>\S+) \[(?P<ts>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<path>[^ ?"]+)(?:\?(?P<query>[^ "]*))? HTTP/(?P<ver>[\d.]+)" '
    r'(?P<status>\d{3}) (?P<bytes>\d+|-) "(?P<ref>[^"]*)" "(?P<agent>[^"]*)" rt=(?P<rt>[\d.]+)$')
N_FEAT = len(METHODS) + 5 + 24 + 7 + len(AGENTS) + 6 + HASH_DIM


def write_logs(path, rng):
    sections = ["api", "static", "shop", "user", "search", "admin", "img", "cart"]
    with open(path, "w") as f:
        for i in range(N_LINES):
            ip = ".".join(str(rng.randint(1, 254)) for _ in range(4))
            ts = "%02d/Mar/2024:%02d:%02d:%02d +0000" % (rng.randint(1, 28), rng.randint(0, 23),
                                                         rng.randint(0, 59), rng.randint(0, 59))
            depth = rng.randint(1, 5)
            path_ = "/" + "/".join(rng.choice(sections) + str(rng.randint(0, 40)) for _ in range(depth))
            q = "" if rng.random() < 0.5 else "?q=%d&page=%d" % (rng.randint(0, 999), rng.randint(1, 9))
            m = rng.choice(METHODS)
            st = rng.choice([200, 200, 200, 201, 204, 301, 304, 400, 403, 404, 500, 503])
            by = str(rng.randint(0, 500000)) if rng.random() < 0.9 else "-"
            rt = 0.01 * depth + (0.4 if m == "POST" else 0.0) + (0.8 if st >= 500 else 0.0) + rng.random() * 0.3
            f.write('%s - user%d [%s] "%s %s%s HTTP/1.1" %d %s "https://ref.example.com/%s" "%s" rt=%.3f\n'
                    % (ip, rng.randint(0, 999), ts, m, path_, q, st, by, rng.choice(sections),
                       rng.choice(AGENTS), rt))


def parse_line(line):
    m = LINE_RE.match(line.rstrip("\n"))
    g = m.groupdict()
    x = [0.0] * N_FEAT
    x[METHODS.index(g["method"])] = 1.0
    o = len(METHODS)
    x[o + int(g["status"][0]) - 1] = 1.0
    o += 5
    ts = datetime.strptime(g["ts"], "%d/%b/%Y:%H:%M:%S %z")
    x[o + ts.hour] = 1.0
    o += 24
    x[o + ts.weekday()] = 1.0
    o += 7
    x[o + AGENTS.index(g["agent"])] = 1.0
    o += len(AGENTS)
    parts = [p for p in g["path"].split("/") if p]
    x[o] = len(parts) / 5.0
    x[o + 1] = 0.0 if g["bytes"] == "-" else np.log1p(int(g["bytes"])) / 13.0
    x[o + 2] = 1.0 if g["query"] else 0.0
    x[o + 3] = len(g["query"] or "") / 20.0
    x[o + 4] = 1.0 if g["user"] != "-" else 0.0
    x[o + 5] = int(g["ip"].split(".")[0]) / 255.0
    o += 6
    for tok in parts + re.findall(r"[a-z]+=\d+", g["query"] or ""):
        x[o + zlib.crc32(tok.encode()) % HASH_DIM] += 1.0
    rt = float(g["rt"])
    y = 0 if rt < 0.15 else (1 if rt < 0.5 else 2)
    return x, y


def batch_generator(path):
    while True:
        with open(path) as f:
            xs, ys = [], []
            for line in f:
                x, y = parse_line(line)
                xs.append(x); ys.append(y)
                if len(xs) == BATCH:
                    yield np.asarray(xs, np.float32), np.asarray(ys, np.int32)
                    xs, ys = [], []


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
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(3),
    ])


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], shuffle=False, verbose=0)
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
    tmp = tempfile.mkdtemp(prefix="u37_input_regex_weblogs_")
    try:
        t0 = time.perf_counter()
        path = os.path.join(tmp, "access.log")
        write_logs(path, random.Random(0))
        full, hist = train(batch_generator(path))
        emit("steps_per_second", 1.0 / full)
        msg = "input_regex_weblogs: %.1f ms/step, acc %.3f" % (full * 1e3, hist["accuracy"][-1])
        if args.truth:
            xb, yb = next(batch_generator(path))
            ds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            compute, _ = train(ds)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
