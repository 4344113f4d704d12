"""Brute-force / credential-stuffing detector over RFC 5424 syslog from SSH gateways.

Raw syslog lines (with structured-data elements) are generated in memory; a
serial tf.data map calls tf.numpy_function, which parses a 64-line window of
RFC 5424 records by hand (header fields, SD-ELEMENT params, message text) into
per-line numeric features; the batched windows feed model.fit.
"""
import os, sys, json, time, tempfile, shutil, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 53
BATCH, STEPS, EPOCHS = 32, 220, 2
WIN, NFEAT = 64, 24
NLINES = 60000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_lines():
    rng = random.Random(SEED)
    lines, attack = [], []
    t = 1_700_000_000.0
    for i in range(NLINES):
        bad = (i // 512) % 3 == 0 and rng.random() < 0.6
        t += rng.expovariate(40.0 if bad else 8.0)
        pri = 8 * 4 + (4 if bad else rng.choice([5, 6]))
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"
        user = rng.choice(["root", "admin", "oracle", "test"]) if bad else f"u{rng.randint(1, 300)}"
        ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        outcome = "Failed" if (bad or rng.random() < 0.05) else "Accepted"
        sd = (f'[auth@32473 user="{user}" src="{ip}" port="{rng.randint(1024, 65535)}" '
              f'method="{rng.choice(["password", "publickey"])}"][meta sequenceId="{i}" sysUpTime="{int(t) % 86400}"]')
        msg = f"{outcome} password for {user} from {ip} port 22 ssh2"
        lines.append(f"<{pri}>1 {ts} gw{i % 7}.corp.example sshd {1000 + i % 97} AUTH {sd} {msg}")
        attack.append(1 if bad else 0)
    return lines, np.asarray(attack, np.float32)


def parse_sd(sd):
    elems = {}
    i = 0
    while i < len(sd) and sd[i] == "[":
        j = sd.index(" ", i)
        name = sd[i + 1:j]
        params = {}
        i = j
        while sd[i] != "]":
            i += 1
            eq = sd.index("=", i)
            key = sd[i:eq]
            k = eq + 2
            val = []
            while sd[k] != '"':
                if sd[k] == "\\":
                    k += 1
                val.append(sd[k]); k += 1
            params[key] = "".join(val)
            i = k + 1
        elems[name] = params
        i += 1
    return elems, sd[i:].strip()


def parse_line(line):
    pri_end = line.index(">")
    pri = int(line[1:pri_end])
    head = line[pri_end + 1:].split(" ", 6)
    version, ts, host, app, procid, msgid, rest = head
    date, clock = ts.rstrip("Z").split("T")
    hh, mm, ss = clock.split(":")
    secs = int(hh) * 3600 + int(mm) * 60 + float(ss)
    sd, msg = parse_sd(rest)
    auth = sd.get("auth", {})
    return pri, secs, host, auth, msg


def window_features(start, lines):
    feats = np.zeros((WIN, NFEAT), np.float32)
    prev = None
    users, ips = set(), set()
    for r in range(WIN):
        pri, secs, host, auth, msg = parse_line(lines[start + r])
        users.add(auth.get("user")); ips.add(auth.get("src"))
        words = msg.split()
        f = feats[r]
        f[0] = pri % 8 / 7.0
        f[1] = min((secs - prev) if prev is not None else 0.0, 10.0) / 10.0
        f[2] = 1.0 if words[0] == "Failed" else 0.0
        f[3] = 1.0 if auth.get("method") == "password" else 0.0
        f[4] = int(auth.get("port", "0")) / 65535.0
        f[5] = len(users) / WIN
        f[6] = len(ips) / WIN
        f[7 + zlib.crc32(auth.get("user", "").encode()) % 8] = 1.0
        f[15 + zlib.crc32(host.encode()) % 9] = 1.0
        prev = secs
    return feats


def make_dataset(lines, attack):
    starts = np.arange(0, NLINES - WIN, 16, dtype=np.int64)

    def load(s):
        s = int(s)
        return window_features(s, lines), np.float32(attack[s:s + WIN].mean() > 0.3)

    ds = tf.data.Dataset.from_tensor_slices(starts).shuffle(len(starts), seed=SEED).repeat()
    ds = ds.map(lambda s: tf.numpy_function(load, [s], (tf.float32, tf.float32)))
    ds = ds.map(lambda x, y: (tf.ensure_shape(x, (WIN, NFEAT)), tf.ensure_shape(y, ())))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((WIN, NFEAT))
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "binary_crossentropy", metrics=["AUC"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    tmp = tempfile.mkdtemp(prefix="u53_input_syslog5424_numpyfn_authlogs_")
    try:
        lines, attack = make_lines()
        ds = make_dataset(lines, attack)
        full = train(ds)
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full * 1000:.1f} ms/step"
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f", compute {comp * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(f"input_syslog5424_numpyfn_authlogs: {len(lines)} lines, {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
