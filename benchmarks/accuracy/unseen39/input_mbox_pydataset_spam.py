"""Spam filtering for a corporate mail gateway, trained from an mbox archive.

A few thousand RFC 822 messages (multipart, base64 and quoted-printable
bodies) are written to a Unix mbox file; a keras.utils.PyDataset parses each
batch with the stdlib email package, decodes the text parts, strips HTML,
tokenises with a regex and hashes tokens into padded id sequences for model.fit.
"""
import os, sys, json, time, tempfile, shutil, re, zlib, mailbox
import email, email.policy
from email.message import EmailMessage
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS = 64, 40, 2
N_MSG, SEQ, VOCAB = 2600, 256, 20000
HAM = "meeting agenda quarterly report budget review project timeline invoice attached please find draft minutes schedule team lunch deadline".split()
SPAM = "winner free prize claim now urgent offer cheap pills bitcoin investment guaranteed click unsubscribe lottery limited".split()
FILLER = "the a of to and in for on with is this that from your our we you it as be".split()
TOKEN_RE = re.compile(r"[a-z0-9']+")
TAG_RE = re.compile(r"<[^>]+>")


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


def make_mbox(path, rng):
    box = mailbox.mbox(path)
    labels = []
    for i in range(N_MSG):
        spam = int(rng.random() < 0.4)
        vocab = SPAM if spam else HAM
        words = [vocab[j] if rng.random() < 0.3 else FILLER[j % len(FILLER)]
                 for j in rng.integers(0, 16, int(rng.integers(80, 220)))]
        text = " ".join(words)
        msg = EmailMessage()
        msg["From"] = f"user{rng.integers(0, 900)}@{'promo' if spam else 'corp'}{rng.integers(0, 9)}.example"
        msg["To"] = "inbox@corp.example"
        msg["Subject"] = " ".join(words[:6]).title()
        msg["Message-ID"] = f"<{i}.{rng.integers(0, 10**9)}@mx.example>"
        msg.set_content(text, cte="quoted-printable" if i % 2 else "base64")
        msg.add_alternative(f"<html><body><p>{text}</p><a href='http://x.example'>link</a></body></html>",
                            subtype="html")
        box.add(msg)
        labels.append(spam)
    box.flush(); box.close()
    return np.asarray(labels, np.float32)


def tok_ids(text):
    ids = [zlib.crc32(t.encode()) % (VOCAB - 1) + 1 for t in TOKEN_RE.findall(text.lower())][:SEQ]
    return ids + [0] * (SEQ - len(ids))


class MboxBatches(keras.utils.PyDataset):
    def __init__(self, raw, labels, **kw):
        super().__init__(**kw)
        self.raw, self.labels = raw, labels
        self.order = np.random.default_rng(7).permutation(len(raw))
    def __len__(self):
        return len(self.raw) // BATCH
    def __getitem__(self, idx):
        sel = self.order[idx * BATCH:(idx + 1) * BATCH]
        x = np.zeros((len(sel), SEQ), np.int32)
        for r, k in enumerate(sel):
            msg = email.message_from_bytes(self.raw[k], policy=email.policy.default)
            parts = [msg["Subject"] or "", msg["From"] or ""]
            for part in msg.walk():
                if part.get_content_maintype() == "text":
                    body = part.get_content()
                    if part.get_content_subtype() == "html":
                        body = TAG_RE.sub(" ", body)
                    parts.append(body)
            x[r] = tok_ids(" ".join(parts))
        return x, self.labels[sel]


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 64)(inp)
    x = keras.layers.Conv1D(96, 5, activation="relu")(x)
    x = keras.layers.Conv1D(96, 5, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    tf.random.set_seed(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_input_mbox_pydataset_spam_")
    try:
        path = os.path.join(tmp, "gateway.mbox")
        labels = make_mbox(path, rng)
        raw = [m.as_bytes() for m in mailbox.mbox(path)]
        data = MboxBatches(raw, labels)
        model = build_model()
        st = StepTimer()
        model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_mbox_pydataset_spam: {1.0/full:.1f} steps/s"
        if truth:
            xb, yb = data[0]
            m2 = build_model()
            st2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), epochs=EPOCHS,
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
