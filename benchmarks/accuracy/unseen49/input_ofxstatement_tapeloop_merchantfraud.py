"""Business: spotting compromised merchant accounts from bank statement exports.
Synthetic OFX (SGML) statement files are written to a temp folder; a plain Python loop reads a
batch of files per step, splits out the <STMTTRN> blocks by string scanning, converts dates and
amounts into a padded transaction sequence, and a @tf.function GradientTape step trains a Conv1D model."""
import os, sys, time, json, datetime, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, N_FILES, N_TXN, SEQ = 32, 150, 400, 240, 256
TYPES = ["DEBIT", "CREDIT", "POS", "ATM", "XFER", "FEE"]

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def write_ofx(folder, rng):
    labels = []; base = datetime.datetime(2025, 1, 1)
    for i in range(N_FILES):
        fraud = int(rng.random() < 0.3); labels.append(fraud)
        t = base; parts = ["OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>"
                           "<CURDEF>USD<BANKACCTFROM><ACCTID>%08d</BANKACCTFROM><BANKTRANLIST>" % i]
        for k in range(N_TXN):
            t += datetime.timedelta(minutes=float(rng.exponential(30 if fraud and k > N_TXN * 0.7 else 300)))
            ty = TYPES[int(rng.integers(len(TYPES)))]
            amt = rng.lognormal(3, 1) * (-1 if ty in ("DEBIT", "POS", "ATM", "FEE") else 1)
            parts.append("<STMTTRN><TRNTYPE>%s<DTPOSTED>%s<TRNAMT>%.2f<FITID>%d%05d<NAME>MERCHANT %d<MEMO>ref %d</STMTTRN>"
                         % (ty, t.strftime("%Y%m%d%H%M%S"), amt, i, k, int(rng.integers(500)), k))
        parts.append("</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>")
        with open(os.path.join(folder, "stmt_%04d.ofx" % i), "w") as f:
            f.write("\n".join(parts))
    return np.array(labels, np.float32)

def field(block, tag):
    s = block.index("<" + tag + ">") + len(tag) + 2
    e = block.find("<", s)
    return block[s:e].strip()

def parse_ofx(path):
    with open(path) as f:
        text = f.read()
    blocks = text.split("<STMTTRN>")[1:]
    seq = np.zeros((SEQ, 10), np.float32); prev = None
    for k, b in enumerate(blocks[-SEQ:]):
        ty = field(b, "TRNTYPE"); amt = float(field(b, "TRNAMT"))
        dt = datetime.datetime.strptime(field(b, "DTPOSTED"), "%Y%m%d%H%M%S")
        gap = 0.0 if prev is None else (dt - prev).total_seconds() / 3600.0
        prev = dt
        seq[k, 0] = np.sign(amt) * np.log1p(abs(amt)); seq[k, 1] = np.log1p(gap)
        seq[k, 2] = dt.hour / 24.0; seq[k, 3] = dt.weekday() / 7.0
        seq[k, 4 + TYPES.index(ty)] = 1.0
    return seq

def build_model():
    inp = keras.Input((SEQ, 10))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)

def train(model, batches, n_steps):
    opt = keras.optimizers.Adam(1e-3); lossf = keras.losses.BinaryCrossentropy(from_logits=True)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    times = []
    for i in range(n_steps):
        x, y = batches(i)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_ofxstatement_tapeloop_merchantfraud_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49)
        labels = write_ofx(tmp, rng)
        paths = [os.path.join(tmp, "stmt_%04d.ofx" % i) for i in range(N_FILES)]
        order = np.random.default_rng(11)

        def from_files(i):
            idx = order.integers(0, N_FILES, BATCH)
            x = np.stack([parse_ofx(paths[j]) for j in idx])
            return x, labels[idx][:, None]

        full, loss = train(build_model(), from_files, STEPS)
        emit({"steps_per_second": 1.0 / full})
        msg = "ofx merchant fraud: %.4f s/step, loss %.3f" % (full, loss)
        if truth:
            bx, by = from_files(0)
            comp, _ = train(build_model(), lambda i: (bx, by), STEPS)
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
