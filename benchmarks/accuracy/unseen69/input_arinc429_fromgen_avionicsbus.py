"""Avionics bus fault classification from raw ARINC 429 words.

Input path: a Python generator (tf.data.Dataset.from_generator) decodes every
32-bit ARINC 429 word in pure Python (label bit reversal, SDI, SSM, odd parity,
two's-complement BNR data, per-label scaling) and aggregates per-label
statistics for each recorded bus snapshot. Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

N_REC = 2000
WORDS = 200          # ARINC words per snapshot (Python decode cost knob)
BATCH = 64
STEPS = 40
EPOCHS = 3
LABELS = [0o203, 0o204, 0o205, 0o206, 0o210, 0o212, 0o213, 0o221, 0o222, 0o223,
          0o310, 0o311, 0o312, 0o313, 0o314, 0o320, 0o324, 0o325, 0o336, 0o337,
          0o346, 0o347, 0o350, 0o361]
SCALE = {l: 1.0 / (1 << (8 + (i % 7))) for i, l in enumerate(LABELS)}
LIDX = {l: i for i, l in enumerate(LABELS)}
REV8 = [int("{:08b}".format(b)[::-1], 2) for b in range(256)]


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_raw(seed=69):
    rng = np.random.default_rng(seed)
    labs = np.array(LABELS, dtype=np.uint32)
    revlab = np.array([REV8[l] for l in LABELS], dtype=np.uint32)
    y = rng.integers(0, 4, N_REC)
    li = rng.integers(0, len(LABELS), (N_REC, WORDS))
    base = rng.normal(0, 30000, (N_REC, WORDS)) + (y[:, None] * 20000) * (li % 4 == y[:, None])
    data = (np.clip(base, -262143, 262143).astype(np.int64) & 0x7FFFF).astype(np.uint32)
    sdi = rng.integers(0, 4, (N_REC, WORDS)).astype(np.uint32)
    ssm = np.where(rng.random((N_REC, WORDS)) < 0.02 * (1 + y[:, None]), 1, 3).astype(np.uint32)
    w = revlab[li] | (sdi << 8) | (data << 10) | (ssm << 29)
    ones = np.array([bin(int(v)).count("1") for v in w.ravel()]).reshape(w.shape)
    par = ((ones + 1) % 2).astype(np.uint32)
    bad = rng.random((N_REC, WORDS)) < 0.01
    par = np.where(bad, 1 - par, par).astype(np.uint32)
    return (w | (par << 31)).astype(np.uint32), y.astype(np.int32)


def decode_snapshot(words):
    nl = len(LABELS)
    s = [0.0] * nl; sq = [0.0] * nl; n = [0] * nl; fail = [0] * nl
    for w in words.tolist():
        lab = REV8[w & 0xFF]
        k = LIDX.get(lab)
        if k is None:
            continue
        ok = (bin(w).count("1") & 1) == 1
        ssm = (w >> 29) & 0x3
        data = (w >> 10) & 0x7FFFF
        if data & 0x40000:
            data -= 0x80000
        if not ok or ssm != 3:
            fail[k] += 1
            continue
        v = data * SCALE[lab]
        s[k] += v; sq[k] += v * v; n[k] += 1
    feats = []
    for k in range(nl):
        m = s[k] / n[k] if n[k] else 0.0
        var = sq[k] / n[k] - m * m if n[k] else 0.0
        feats += [m, var ** 0.5 if var > 0 else 0.0, n[k] / 16.0, fail[k] / 4.0]
    return np.asarray(feats, np.float32)


def build_model():
    m = keras.Sequential([keras.Input((len(LABELS) * 4,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


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


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    raw, y = make_raw()

    def gen():
        i = 0
        while True:
            j = i % N_REC
            yield decode_snapshot(raw[j]), y[j]
            i += 1

    sig = (tf.TensorSpec((len(LABELS) * 4,), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)
    timer = StepTimer()
    model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[arinc429_fromgen] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        xb = np.stack([decode_snapshot(raw[j]) for j in range(BATCH)]); yb = y[:BATCH]
        tds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        t2 = StepTimer(); m2 = build_model()
        m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[arinc429_fromgen] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
