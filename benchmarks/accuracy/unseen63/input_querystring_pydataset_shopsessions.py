"""Web shop sessions: predict purchase conversion from raw request URLs.

Input path: keras.utils.PyDataset whose __getitem__ parses each session's raw
request log lines with urllib.parse (path segments, query strings, UTM tags,
search terms, cart events) and hashes them into a sparse-ish count vector;
model.fit consumes the PyDataset directly (no worker processes).
Deliberate bottleneck: per-line URL parsing in Python inside __getitem__.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, zlib
from urllib.parse import urlsplit, parse_qsl, unquote_plus
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 64
STEPS = 60
EPOCHS = 3
HASH_DIM = 2048
N_SESSIONS = 3000
LINES_PER_SESSION = 12

PATHS = ["/", "/c/shoes", "/c/dresses", "/c/kitchen", "/p/{}", "/search", "/cart", "/checkout/step1",
         "/checkout/step2", "/account", "/wishlist", "/p/{}/reviews"]
SOURCES = ["google", "newsletter", "instagram", "direct", "affiliate", "tiktok"]
TERMS = ["red sneakers", "linen shirt", "air fryer", "summer dress", "kids rain boots", "coffee grinder",
         "yoga mat", "wool socks"]


def make_sessions(seed=63):
    rng = np.random.default_rng(seed)
    sess, labels = [], []
    for s in range(N_SESSIONS):
        buyer = rng.random() < 0.3
        lines = []
        for k in range(LINES_PER_SESSION):
            p = PATHS[int(rng.integers(len(PATHS)))].format(int(rng.integers(1, 99999)))
            if buyer and k > LINES_PER_SESSION - 4:
                p = ["/cart", "/checkout/step1", "/checkout/step2"][k - (LINES_PER_SESSION - 3)]
            q = [("utm_source", SOURCES[int(rng.integers(len(SOURCES)))]), ("sid", f"{s:x}"),
                 ("ts", str(1700000000 + int(rng.integers(0, 10 ** 6))))]
            if p == "/search":
                q.append(("q", TERMS[int(rng.integers(len(TERMS)))].replace(" ", "+")))
            if rng.random() < 0.3:
                q.append(("price", f"{rng.uniform(3, 300):.2f}"))
            lines.append("https://shop.example.com" + p + "?" + "&".join(f"{a}={b}" for a, b in q))
        sess.append("\n".join(lines))
        labels.append(int(buyer))
    return sess, np.array(labels, np.float32)


def featurize(session_text):
    x = np.zeros(HASH_DIM, np.float32)
    prev = "START"
    prices = []
    for line in session_text.split("\n"):
        u = urlsplit(line)
        segs = [seg for seg in u.path.split("/") if seg]
        key = "/".join(segs[:2]) if segs and segs[0] != "p" else "p"
        toks = ["path:" + key, "trans:" + prev + ">" + key]
        for a, b in parse_qsl(u.query):
            b = unquote_plus(b)
            if a == "q":
                toks += ["q:" + w for w in b.split()]
            elif a == "price":
                prices.append(float(b))
            elif a == "utm_source":
                toks.append("src:" + b)
        for t in toks:
            x[zlib.crc32(t.encode()) % HASH_DIM] += 1.0
        prev = key
    if prices:
        x[0] = np.log1p(np.mean(prices))
    return x


class SessionPages(keras.utils.PyDataset):
    def __init__(self, sess, labels, **kw):
        super().__init__(**kw)
        self.sess, self.labels = sess, labels
        self.order = np.random.default_rng(1).permutation(len(sess))
    def __len__(self):
        return STEPS
    def __getitem__(self, i):
        i = i % (len(self.sess) // BATCH)
        idx = self.order[i * BATCH:(i + 1) * BATCH]
        x = np.stack([featurize(self.sess[j]) for j in idx])
        return x, self.labels[idx]


def build_model():
    m = keras.Sequential([
        keras.Input((HASH_DIM,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(data, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    sps = timer.sec_per_step()
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    sess, labels = make_sessions()
    pages = SessionPages(sess, labels)
    full = run(pages, "pydataset")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = pages[0]
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
