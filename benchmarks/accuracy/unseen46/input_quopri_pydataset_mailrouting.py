"""Mail routing for a shared support inbox: messages are stored as raw RFC 822
files with quoted-printable bodies in a maildir-style folder.  A
keras.utils.PyDataset opens each file, parses it with the email package,
decodes the quoted-printable body, and hashes header and body words into a
1024-dim bag-of-words vector that feeds model.fit."""
import os, sys, json, time, shutil, tempfile, email, quopri, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, NFILES, DIM, NCLS = 48, 75, 8, 3600, 1024, 6
WORDS = ("invoice refund password login shipping delay broken screen warranty account "
         "charge card cancel upgrade plan renew address change urgent help error crash "
         "sync export report printer license seat trial discount coupon").split()


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
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_mail(path, rng, k):
    label = k % NCLS
    words = [WORDS[(label * 5 + int(rng.integers(0, 8))) % len(WORDS)] if rng.random() < 0.4
             else WORDS[int(rng.integers(0, len(WORDS)))] for _ in range(int(rng.integers(200, 320)))]
    body = " ".join(words) + " caf\u00e9 r\u00e9sum\u00e9 \u20ac%d" % k
    qp = quopri.encodestring(body.encode("utf-8")).decode("ascii")
    raw = ("From: customer%d@example.org\r\nTo: support@example.com\r\n"
           "Subject: =?utf-8?q?ticket_%d_%s?=\r\nX-Queue: %d\r\nMIME-Version: 1.0\r\n"
           "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n%s\r\n"
           % (k, k, WORDS[label], label, qp))
    with open(path, "w", newline="") as f:
        f.write(raw)


def vectorize(path):
    with open(path, "rb") as f:
        msg = email.message_from_bytes(f.read())
    body = msg.get_payload(decode=True).decode("utf-8", "replace")
    subj = str(email.header.make_header(email.header.decode_header(msg["Subject"])))
    v = np.zeros(DIM, np.float32)
    toks = (subj + " " + body).lower().split()
    for a, b in zip(toks, toks[1:] + [""]):
        v[zlib.crc32(a.encode()) % DIM] += 1.0
        v[zlib.crc32((a + "_" + b).encode()) % DIM] += 0.5
    return np.log1p(v), int(msg["X-Queue"])


class MailSet(keras.utils.PyDataset):
    def __init__(self, paths, **kw):
        super().__init__(**kw); self.paths = paths
        self.order = np.random.default_rng(3).permutation(len(paths))
    def __len__(self):
        return len(self.paths) // BATCH
    def __getitem__(self, i):
        xs, ys = zip(*(vectorize(self.paths[j]) for j in self.order[i * BATCH:(i + 1) * BATCH]))
        return np.stack(xs), np.array(ys, np.int32)


def build():
    keras.utils.set_random_seed(11)
    m = keras.Sequential([keras.Input((DIM,)), keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dropout(0.2), keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dense(NCLS)])
    m.compile(keras.optimizers.Adam(1e-3),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_quopri_pydataset_mailrouting_")
    try:
        rng = np.random.default_rng(46)
        paths = []
        for k in range(NFILES):
            p = os.path.join(tmp, "%06d.eml" % k); write_mail(p, rng, k); paths.append(p)
        data = MailSet(paths)
        steps = min(STEPS, len(data))
        t0 = time.perf_counter()
        timer = StepTimer()
        hist = build().fit(data, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = "acc=%.3f sec/step=%.4f" % (hist.history["accuracy"][-1], full)
        if truth:
            xb, yb = data[0]
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            t2 = StepTimer()
            build().fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_quopri_pydataset_mailrouting: %s wall_fit=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
