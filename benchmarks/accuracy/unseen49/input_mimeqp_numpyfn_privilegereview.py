"""Law: e-discovery privilege review of law-firm e-mail.
Synthetic RFC-822 messages with quoted-printable bodies are held in memory as raw bytes; a
tf.data map wraps tf.numpy_function around Python's email parser, which decodes headers and the
quoted-printable payload and hashes character trigrams into a vector that feeds model.fit."""
import os, sys, time, json, zlib, email, email.policy, quopri, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_MAIL, BODY_WORDS, DIM = 32, 50, 3, 3000, 160, 2048
WORDS = ["counsel", "privileged", "attorney", "client", "settlement", "draft", "deposition", "invoice",
         "meeting", "lunch", "quarterly", "merger", "confidential", "advice", "litigation", "hold",
         "schedule", "résumé", "café", "naïve", "€500", "§12", "exhibit", "discovery"]

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
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def make_mail(rng):
    raw, labels = [], []
    for i in range(N_MAIL):
        priv = int(rng.random() < 0.35)
        idx = rng.integers(0, len(WORDS), BODY_WORDS)
        if priv:
            idx[: BODY_WORDS // 8] = rng.choice([0, 1, 2, 3, 13, 14], BODY_WORDS // 8)
        body = " ".join(WORDS[j] for j in idx)
        qp = quopri.encodestring(body.encode("utf-8")).decode("ascii")
        msg = ("From: partner%d@firm.example\r\nTo: client%d@corp.example\r\nSubject: Re: matter %d\r\n"
               "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
               "Content-Transfer-Encoding: quoted-printable\r\n\r\n%s\r\n") % (i % 40, i % 90, i, qp)
        raw.append(msg.encode("ascii")); labels.append(priv)
    return np.array(raw, dtype=object), np.array(labels, np.float32)

def parse_mail(raw):
    msg = email.message_from_bytes(bytes(raw), policy=email.policy.default)
    text = (msg["Subject"] + " " + msg["From"] + " " + msg.get_content()).lower()
    vec = np.zeros(DIM, np.float32)
    for k in range(len(text) - 2):
        vec[zlib.crc32(text[k:k + 3].encode("utf-8")) % DIM] += 1.0
    return vec / max(1.0, float(vec.sum()))

def featurize(raw, y):
    x = tf.numpy_function(parse_mail, [raw], tf.float32)
    x.set_shape((DIM,))
    return x, y

def build_model():
    inp = keras.Input((DIM,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_mimeqp_numpyfn_privilegereview_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49)
        raw, labels = make_mail(rng)
        ds = (tf.data.Dataset.from_tensor_slices((tf.constant(list(raw)), labels)).shuffle(N_MAIL, seed=5).repeat()
              .map(featurize).batch(BATCH).prefetch(1))
        model = build_model(); timer = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "privilege review: %.4f s/step" % full
        if truth:
            batch = next(iter(ds))
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
