"""Firewall session anomaly detection from raw syslog windows.

Data path: tf.data.Dataset.from_tensor_slices over raw text windows (each
element is 40 firewall syslog lines, RFC 3164 style, joined by newlines).
A tf.py_function in the tf.data map decodes the bytes, parses every line
with a regex (timestamp, action, protocol, src/dst IP and ports, bytes),
classifies addresses with the ipaddress module, and aggregates a
per-window feature vector; then batch -> prefetch -> model.fit.
Deliberate bottleneck: per-line regex + ipaddress parsing in py_function.
"""
import time
T0 = time.perf_counter()
import argparse, datetime, ipaddress, json, os, re
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 85
EPOCHS = 2
LINES = 24
WINDOWS = 400
FEAT = 48

LINE = re.compile(r"^<(\d+)>(\w{3} +\d+ [\d:]{8}) (\S+) fw\[\d+\]: action=(\w+) proto=(\w+) "
                  r"src=([\d.]+):(\d+) dst=([\d.]+):(\d+) bytes=(\d+) rule=(\S+)$")
PORTS = [22, 23, 53, 80, 123, 443, 445, 3389, 8080]


def make_windows(rng):
    wins, labels = [], []
    base = datetime.datetime(2026, 5, 1)
    for w in range(WINDOWS):
        scan = w % 5 == 0
        lines = []
        for k in range(LINES):
            t = base + datetime.timedelta(seconds=int(w * 60 + k))
            act = "DENY" if (scan and rng.random() < 0.8) or rng.random() < 0.1 else "ALLOW"
            src = f"{rng.choice([10, 192, 203, 45])}.{rng.integers(0, 255)}.{rng.integers(0, 255)}.{rng.integers(1, 254)}"
            dst = f"10.0.{rng.integers(0, 4)}.{rng.integers(1, 254)}"
            dport = int(rng.integers(1, 65535)) if scan else int(rng.choice(PORTS))
            lines.append(f"<134>{t:%b %d %H:%M:%S} edge-fw-{w % 3} fw[{1000 + k}]: action={act} "
                         f"proto={rng.choice(['TCP', 'UDP'])} src={src}:{rng.integers(1024, 65535)} "
                         f"dst={dst}:{dport} bytes={rng.integers(40, 90000)} rule=r{rng.integers(1, 40)}")
        wins.append("\n".join(lines))
        labels.append(float(scan))
    return np.array(wins), np.asarray(labels, np.float32)


def parse_window(raw):
    text = raw.numpy().decode()
    feats = np.zeros(FEAT, np.float32)
    srcs, dports, denies, byts, private, secs = set(), set(), 0, [], 0, []
    for line in text.split("\n"):
        m = LINE.match(line)
        if not m:
            continue
        pri, ts, host, act, proto, src, sport, dst, dport, nbytes, rule = m.groups()
        secs.append(datetime.datetime.strptime("2026 " + ts, "%Y %b %d %H:%M:%S").timestamp())
        ip = ipaddress.ip_address(src)
        private += ip.is_private
        srcs.add(src)
        dp = int(dport)
        dports.add(dp)
        denies += act == "DENY"
        byts.append(int(nbytes))
        feats[8 + (PORTS.index(dp) if dp in PORTS else 9)] += 1
        feats[20 + int(ipaddress.ip_network(dst + "/24", strict=False).network_address.packed[2]) % 8] += 1
        feats[30 + int(rule[1:]) % 16] += 1
    b = np.asarray(byts, np.float32)
    span = (max(secs) - min(secs)) if secs else 0.0
    feats[:8] = [len(srcs) / LINES, len(dports) / LINES, denies / LINES, private / LINES,
                 np.log1p(b.mean()) / 12, np.log1p(b.std()) / 12, span / 100.0, len(byts) / LINES]
    feats[8:30] /= LINES
    feats[30:] /= LINES
    return feats


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    wins, labels = make_windows(np.random.default_rng(62))

    def tf_parse(raw, y):
        x = tf.py_function(parse_window, [raw], tf.float32)
        x.set_shape((FEAT,))
        return x, y

    ds = (tf.data.Dataset.from_tensor_slices((wins, labels)).shuffle(WINDOWS, seed=1).repeat()
          .map(tf_parse).batch(BATCH).prefetch(1))
    full = run(ds)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_syslogregex_pyfunction_firewall: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
