"""Shopping-app web sessions: predict whether a session ends in checkout.

Each training example is one session of raw combined-format access-log lines
(kept in memory as strings). A Python generator fed to tf.data via
from_generator parses every line with regexes, parses the User-Agent string
into browser/OS/device/version fields and aggregates them into a feature
vector that a Keras MLP consumes through model.fit.
"""
import os
import sys
import json
import time
import re
import random
import shutil
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 130
EPOCHS = 3
N_SESSIONS = 3000
LINES_PER_SESSION = 36
N_FEAT = 160

LOG_RE = re.compile(
    r'(?P<ip>\S+) \S+ \S+ \[(?P<day>\d{2})/(?P<mon>\w{3})/(?P<year>\d{4}):'
    r'(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2}) [+-]\d{4}\] '
    r'"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/(?P<ver>[\d.]+)" (?P<status>\d{3}) '
    r'(?P<bytes>\d+|-) "(?P<ref>[^"]*)" "(?P<ua>[^"]*)"')
UA_RULES = [
    ("bot", re.compile(r"(?i)(bot|crawler|spider|slurp)[/ ]?(\d+)?")),
    ("app_ios", re.compile(r"ShopApp/(\d+)\.(\d+)\.(\d+) \(iPhone; iOS (\d+)[._](\d+)")),
    ("app_android", re.compile(r"okhttp/(\d+)\.(\d+)\.(\d+)")),
    ("edge", re.compile(r"Edg(?:e|A|iOS)?/(\d+)\.(\d+)")),
    ("chrome", re.compile(r"(?:Chrome|CriOS)/(\d+)\.(\d+)\.(\d+)\.(\d+)")),
    ("firefox", re.compile(r"(?:Firefox|FxiOS)/(\d+)\.(\d+)")),
    ("safari", re.compile(r"Version/(\d+)\.(\d+)(?:\.(\d+))? (?:Mobile/\w+ )?Safari/")),
]
OS_RULES = [
    ("android", re.compile(r"Android (\d+)(?:\.(\d+))?")),
    ("ios", re.compile(r"(?:iPhone|CPU) (?:iPhone )?OS (\d+)[._](\d+)|iOS (\d+)")),
    ("windows", re.compile(r"Windows NT (\d+)\.(\d+)")),
    ("macos", re.compile(r"Mac OS X (\d+)[._](\d+)")),
    ("linux", re.compile(r"X11; Linux")),
]
DEVICE_RE = re.compile(r"Android [\d.]+; ([^;)]+)")
MOBILE_RE = re.compile(r"Mobile|iPhone|okhttp|ShopApp")
PATH_RE = re.compile(r"^/(?P<sec>[a-z\-]+)(?:/(?P<sub>[\w\-]+))?(?:\?(?P<q>.*))?$")
MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}
SECTIONS = ["home", "search", "product", "category", "cart", "checkout",
            "account", "wishlist", "api", "static", "reviews", "deals"]


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_user_agent(rng):
    k = rng.random()
    if k < 0.25:
        return ("Mozilla/5.0 (Linux; Android %d; %s) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/%d.0.%d.%d Mobile Safari/537.36" % (
                    rng.randint(9, 14), rng.choice(["SM-G991B", "Pixel 7", "M2101K6G", "CPH2451"]),
                    rng.randint(108, 121), rng.randint(5000, 6200), rng.randint(10, 200)))
    if k < 0.45:
        v = rng.randint(14, 17)
        return ("Mozilla/5.0 (iPhone; CPU iPhone OS %d_%d like Mac OS X) AppleWebKit/605.1.15 "
                "(KHTML, like Gecko) Version/%d.%d Mobile/15E148 Safari/604.1" % (
                    v, rng.randint(0, 6), v, rng.randint(0, 6)))
    if k < 0.60:
        cv = rng.randint(110, 121)
        return ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/%d.0.0.0 Safari/537.36%s" % (cv, " Edg/%d.0.%d.%d" % (
                    cv, rng.randint(1000, 2300), rng.randint(10, 99)) if rng.random() < 0.3 else ""))
    if k < 0.70:
        return ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
                "(KHTML, like Gecko) Version/%d.%d Safari/605.1.15" % (rng.randint(15, 17), rng.randint(0, 5)))
    if k < 0.78:
        return "Mozilla/5.0 (X11; Linux x86_64; rv:%d.0) Gecko/20100101 Firefox/%d.0" % ((rng.randint(110, 121),) * 2)
    if k < 0.88:
        return "ShopApp/%d.%d.%d (iPhone; iOS %d.%d; Scale/3.00)" % (
            rng.randint(3, 5), rng.randint(0, 20), rng.randint(0, 9), rng.randint(14, 17), rng.randint(0, 5))
    if k < 0.96:
        return "okhttp/4.%d.%d" % (rng.randint(8, 12), rng.randint(0, 3))
    return "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def make_sessions(seed):
    rng = random.Random(seed)
    sessions, labels = [], []
    for _ in range(N_SESSIONS):
        ua = make_user_agent(rng)
        ip = "%d.%d.%d.%d" % tuple(rng.randint(1, 254) for _ in range(4))
        h, m, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        buyer = rng.random() < 0.3
        lines = []
        for i in range(LINES_PER_SESSION):
            s += rng.randint(1, 40)
            m, s = m + s // 60, s % 60
            h, m = (h + m // 60) % 24, m % 60
            sec = rng.choice(SECTIONS[:5] + (["cart", "checkout"] if buyer and i > 20 else ["search"]))
            path = "/%s/%s?ref=%s&page=%d" % (sec, "p%05d" % rng.randint(0, 99999),
                                             rng.choice(["email", "ad", "organic"]), rng.randint(1, 9))
            status = rng.choice([200] * 12 + [304, 404, 500, 302])
            lines.append('%s - - [%02d/Dec/2026:%02d:%02d:%02d +0000] "GET %s HTTP/1.1" %d %d "%s" "%s"' % (
                ip, rng.randint(1, 28), h, m, s, path, status, rng.randint(200, 90000),
                "https://shop.example.com/" + rng.choice(SECTIONS), ua))
        sessions.append(lines)
        labels.append(1.0 if buyer else 0.0)
    return sessions, np.asarray(labels, np.float32)


def session_features(lines):
    f = np.zeros(N_FEAT, np.float32)
    prev = None
    for line in lines:
        m = LOG_RE.match(line)
        if m is None:
            f[0] += 1
            continue
        ua = m.group("ua")
        for j, (name, rule) in enumerate(UA_RULES):
            um = rule.search(ua)
            if um:
                f[1 + j] += 1
                nums = [int(x) for x in um.groups() if x and x.isdigit()]
                if nums:
                    f[10 + j] += nums[0] / 100.0
                break
        for j, (name, rule) in enumerate(OS_RULES):
            om = rule.search(ua)
            if om:
                f[20 + j] += 1
                nums = [int(x) for x in om.groups() if x]
                if nums:
                    f[26 + j] += nums[0] / 20.0
                break
        dm = DEVICE_RE.search(ua)
        if dm:
            f[32 + (sum(map(ord, dm.group(1))) % 16)] += 1
        f[48] += 1 if MOBILE_RE.search(ua) else 0
        t = int(m.group("h")) * 3600 + int(m.group("m")) * 60 + int(m.group("s"))
        if prev is not None:
            gap = (t - prev) % 86400
            f[49] += np.log1p(gap)
            f[50 + min(int(gap // 10), 9)] += 1
        prev = t
        f[60 + MONTHS.get(m.group("mon"), 0)] += 1
        st = int(m.group("status"))
        f[72 + st // 100] += 1
        b = m.group("bytes")
        f[78] += np.log1p(int(b)) if b != "-" else 0.0
        pm = PATH_RE.match(m.group("path"))
        if pm:
            sec = pm.group("sec")
            if sec in SECTIONS:
                f[80 + SECTIONS.index(sec)] += 1
            for kv in (pm.group("q") or "").split("&"):
                key, _, val = kv.partition("=")
                f[96 + (zlib.crc32(kv.encode()) % 48)] += 1
        ref = m.group("ref")
        f[144 + (len(ref) % 16)] += 1
    return f / len(lines)


def build_model():
    keras.utils.set_random_seed(7)
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                  metrics=["AUC"])
    return model


def make_dataset(sessions, labels):
    def gen():
        order = np.random.default_rng(11).permutation(len(sessions))
        while True:
            for i in order:
                yield session_features(sessions[i]), labels[i]
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((N_FEAT,), tf.float32),
                               tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH).prefetch(2)


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u56_input_useragent_fromgen_appsessions_")
    try:
        t0 = time.perf_counter()
        sessions, labels = make_sessions(1)
        full, loss = train(make_dataset(sessions, labels))
        report("steps_per_second", 1.0 / full)
        msg = "full %.1f ms/step loss %.4f" % (full * 1e3, loss)
        if truth:
            batch = next(iter(make_dataset(sessions, labels)))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += " compute %.1f ms/step truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_useragent_fromgen_appsessions: %s (%.1f s)" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
