"""Customs risk scoring for sea-freight: predict whether a shipping manifest is flagged for
physical inspection. Manifests arrive as UN/EDIFACT IFTMIN-style message strings; each
training batch is parsed in Python (segment/element/component splitting, crc32 feature
hashing of parties, ports and HS codes, numeric weights) and fed to a @tf.function
GradientTape step in a plain Python loop."""
import time
T0 = time.perf_counter()
import json, os, random, shutil, sys, tempfile, zlib
import numpy as np
import tensorflow as tf
import keras

SEED, BATCH, STEPS, EPOCHS, N_MSG, BUCKETS = 48, 128, 200, 3, 6000, 2048
PORTS = ["NLRTM", "DEHAM", "CNSHA", "SGSIN", "USLAX", "BEANR", "KRPUS", "AEJEA", "BRSSZ", "INNSA"]


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_messages(n):
    rng = random.Random(SEED)
    msgs = []
    for i in range(n):
        risky = rng.random() < 0.3
        segs = ["UNH+%d+IFTMIN:D:96A:UN" % i, "BGM+610+MAN%07d+9" % i,
                "DTM+137:2026%02d%02d:102" % (rng.randint(1, 12), rng.randint(1, 28)),
                "LOC+5+%s:139:6" % rng.choice(PORTS), "LOC+8+%s:139:6" % rng.choice(PORTS),
                "NAD+CZ+SHP%04d::87" % rng.randint(0, 400 if not risky else 40),
                "NAD+CN+CNE%04d::87" % rng.randint(0, 900)]
        for g in range(rng.randint(3, 12)):
            hs = rng.choice(["8471", "6204", "9403", "3004", "8703", "2402", "9302"] if risky else ["8471", "6204", "9403", "8517", "3926"])
            segs += ["GID+%d+%d:CT" % (g + 1, rng.randint(1, 400)),
                     "FTX+AAA+++%s GOODS LOT %d" % (rng.choice(["GENERAL", "SPARE", "MIXED", "TEXTILE"]), g),
                     "PIA+5+%s%02d:HS" % (hs, rng.randint(0, 99)),
                     "MEA+WT+G+KGM:%.1f" % rng.lognormvariate(6 + risky, 1.0),
                     "MEA+AAE+AAW+MTQ:%.2f" % rng.uniform(0.5, 60)]
        segs.append("UNT+%d+%d" % (len(segs) + 1, i))
        msgs.append(("'".join(segs) + "'", 1.0 if risky else 0.0))
    return msgs


def parse_manifest(msg):
    hashed = np.zeros(BUCKETS, np.float32)
    num = np.zeros(6, np.float32)
    for seg in msg.rstrip("'").split("'"):
        elems = [e.split(":") for e in seg.split("+")]
        tag = elems[0][0]
        for e in elems[1:]:
            for comp in e:
                if comp:
                    hashed[zlib.crc32(f"{tag}|{comp}".encode()) % BUCKETS] += 1.0
        if tag == "MEA" and elems[1][0] == "WT":
            num[0] += float(elems[3][1]); num[1] = max(num[1], float(elems[3][1]))
        elif tag == "MEA":
            num[2] += float(elems[3][1])
        elif tag == "GID":
            num[3] += 1; num[4] += float(elems[2][0])
        elif tag == "PIA":
            num[5] += 1
    return np.concatenate([np.log1p(hashed), np.log1p(num)])


def make_batch(msgs, idx):
    x = np.stack([parse_manifest(msgs[i][0]) for i in idx])
    y = np.array([[msgs[i][1]] for i in idx], np.float32)
    return x, y


def build():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([keras.Input((BUCKETS + 6,)),
                              keras.layers.Dense(768, activation="relu"),
                              keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(1)])
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def train(step, batch_fn):
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(epoch, s)
            loss = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return sum(g) / len(g), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_edifact_tapeloop_shipmanifests_")
    try:
        msgs = make_messages(N_MSG)
        rng = np.random.default_rng(SEED)
        order = rng.permutation(N_MSG)

        def batch_fn(epoch, s):
            start = ((epoch * STEPS + s) * BATCH) % (N_MSG - BATCH)
            return make_batch(msgs, order[start:start + BATCH])

        full, loss = train(build(), batch_fn)
        emit("steps_per_second", 1.0 / full)
        msg = f"edifact manifests: loss={loss:.4f} step={full*1000:.1f}ms main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            fixed = batch_fn(0, 0)
            comp, _ = train(build(), lambda e, s: fixed)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
