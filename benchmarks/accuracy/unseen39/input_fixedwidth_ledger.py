"""Bank-ledger anomaly flagging from COBOL-style fixed-width export files.

The core-banking system exports one 96-character fixed-width record per
posting; a Python generator slices each line by a column spec, parses dates,
signed zoned-decimal amounts and branch/teller codes, and feeds engineered
features to model.fit through tf.data.Dataset.from_generator.
"""
import os, sys, json, time, tempfile, shutil, datetime
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 256, 80, 2
N_REC = 24000
SPEC = [("acct", 0, 12), ("date", 12, 20), ("time", 20, 26), ("branch", 26, 31),
        ("teller", 31, 37), ("code", 37, 41), ("amount", 41, 54), ("balance", 54, 67),
        ("currency", 67, 70), ("channel", 70, 72), ("memo", 72, 96)]
CODES = ["DEP ", "WDL ", "XFR ", "FEE ", "INT ", "CHQ ", "POS ", "ATM "]
CHANNELS = ["BR", "AT", "WB", "MB", "PH"]
CURR = ["USD", "EUR", "GBP", "JPY"]
ZONED_POS = "{ABCDEFGHI"
ZONED_NEG = "}JKLMNOPQR"


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
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def zoned(v, width):
    s = str(abs(int(v))).rjust(width, "0")
    last = (ZONED_NEG if v < 0 else ZONED_POS)[int(s[-1])]
    return s[:-1] + last


def write_ledger(path, rng):
    base = datetime.date(2024, 1, 1)
    with open(path, "w") as f:
        for i in range(N_REC):
            d = base + datetime.timedelta(days=int(rng.integers(0, 365)))
            amt = int(rng.normal(0, 40000))
            bal = int(rng.normal(250000, 90000))
            rec = (f"{rng.integers(10**11, 10**12):012d}" + d.strftime("%Y%m%d")
                   + f"{rng.integers(0, 24):02d}{rng.integers(0, 60):02d}{rng.integers(0, 60):02d}"
                   + f"{rng.integers(0, 400):05d}" + f"T{rng.integers(0, 99999):05d}"
                   + CODES[rng.integers(0, 8)] + zoned(amt, 13) + zoned(bal, 13)
                   + CURR[rng.integers(0, 4)] + CHANNELS[rng.integers(0, 5)]
                   + ("REF " + "".join(chr(65 + int(c)) for c in rng.integers(0, 26, 12))).ljust(24))
            f.write(rec + "\n")


def unzone(s):
    c = s[-1]
    if c in ZONED_NEG:
        return -int(s[:-1] + str(ZONED_NEG.index(c)))
    return int(s[:-1] + str(ZONED_POS.index(c)))


def parse(line):
    r = {k: line[a:b] for k, a, b in SPEC}
    d = datetime.datetime.strptime(r["date"] + r["time"], "%Y%m%d%H%M%S")
    amt = unzone(r["amount"]) / 100.0
    bal = unzone(r["balance"]) / 100.0
    feat = [amt / 500.0, bal / 3000.0, abs(amt) / (abs(bal) + 1.0), d.hour / 23.0,
            d.weekday() / 6.0, d.timetuple().tm_yday / 365.0, int(r["branch"]) / 400.0,
            int(r["teller"][1:]) / 99999.0, float(d.minute == 0), float(amt < 0)]
    feat += [float(r["code"] == c) for c in CODES]
    feat += [float(r["channel"] == c) for c in CHANNELS]
    feat += [float(r["currency"] == c) for c in CURR]
    memo = r["memo"].strip()
    feat += [len(memo) / 24.0, sum(ch in "AEIOU" for ch in memo) / 24.0]
    label = float(abs(amt) > 700 and (d.hour < 6 or r["channel"] == "WB"))
    return np.asarray(feat, np.float32), np.float32(label)


def ledger_gen(path):
    while True:
        with open(path) as f:
            for line in f:
                yield parse(line.rstrip("\n"))


def build_model(nfeat):
    inp = keras.Input((nfeat,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_fixedwidth_ledger_")
    try:
        path = os.path.join(tmp, "ledger_2024.dat")
        write_ledger(path, rng)
        nfeat = len(parse(open(path).readline().rstrip("\n"))[0])
        sig = (tf.TensorSpec((nfeat,), tf.float32), tf.TensorSpec((), tf.float32))
        ds = tf.data.Dataset.from_generator(lambda: ledger_gen(path), output_signature=sig)
        ds = ds.batch(BATCH).prefetch(2)
        model = build_model(nfeat)
        st = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_fixedwidth_ledger: {1.0/full:.1f} steps/s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model(nfeat)
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
