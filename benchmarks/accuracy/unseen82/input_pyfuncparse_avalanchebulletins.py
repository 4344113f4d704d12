import time; T0 = time.perf_counter()
"""Regional avalanche bulletins -> next-day danger level (1-5).

Raw bulletin texts live in memory as a tf.data string dataset. Each one is
parsed by a Python function wrapped in tf.numpy_function inside a serial
Dataset.map (no num_parallel_calls): regex extraction of danger ratings per
elevation band, aspect rose, snowpack problem flags, weather numbers, and a
hashed bag of words / bigrams over the free-text snowpack discussion.
"""
import json
import os
import random
import re
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 180
EPOCHS = 3
HASH_DIM = 1024
NUM_FEATS = 32
N_BULLETINS = 2048
ASPECTS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
PROBLEMS = ["wind slab", "persistent slab", "storm slab", "wet loose", "cornice", "glide"]
VOCAB = ("surface hoar buried facets crust depth hoar whumpfing shooting cracks natural releases "
         "skier triggered loading ridgeline gully convexity cohesive slab rain-on-snow warming "
         "refreeze melt-freeze graupel layer propagation test results stability poor fair good").split()
RATING_RE = re.compile(r"(alpine|treeline|below treeline): (\d) \((\w+)\)")
ASPECT_RE = re.compile(r"aspects: ([A-Z, ]+)")
WX_RE = re.compile(r"new snow (\d+) cm, wind (\d+) km/h ([A-Z]+), temp (-?\d+) C")


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_bulletins(n, seed=82):
    rng = random.Random(seed)
    names = ["low", "moderate", "considerable", "high", "extreme"]
    out = []
    for i in range(n):
        lvl = [rng.randrange(1, 6) for _ in range(3)]
        asp = ", ".join(sorted(rng.sample(ASPECTS, rng.randrange(1, 6))))
        probs = "; ".join(rng.sample(PROBLEMS, rng.randrange(1, 4)))
        text = " ".join(rng.choice(VOCAB) for _ in range(rng.randrange(60, 140)))
        out.append(
            f"Region {i % 37:02d} bulletin {i}. alpine: {lvl[0]} ({names[lvl[0]-1]}) "
            f"treeline: {lvl[1]} ({names[lvl[1]-1]}) below treeline: {lvl[2]} ({names[lvl[2]-1]}). "
            f"problems: {probs}. aspects: {asp}. new snow {rng.randrange(0, 60)} cm, wind "
            f"{rng.randrange(0, 90)} km/h {rng.choice(ASPECTS)}, temp {rng.randrange(-25, 8)} C. "
            f"discussion: {text}")
    return out


def parse_bulletin(raw):
    text = raw.decode("utf-8")
    num = np.zeros(NUM_FEATS, np.float32)
    levels = []
    for k, (band, lvl, _) in enumerate(RATING_RE.findall(text)):
        num[k] = int(lvl) / 5.0
        levels.append(int(lvl))
    m = ASPECT_RE.search(text)
    if m:
        for a in m.group(1).split(", "):
            a = a.strip()
            if a in ASPECTS:
                num[3 + ASPECTS.index(a)] = 1.0
    for j, p in enumerate(PROBLEMS):
        if p in text:
            num[11 + j] = 1.0
    w = WX_RE.search(text)
    if w:
        num[17] = int(w.group(1)) / 60.0
        num[18] = int(w.group(2)) / 90.0
        num[19 + ASPECTS.index(w.group(3))] = 1.0
        num[27] = (int(w.group(4)) + 25) / 33.0
    words = re.findall(r"[a-z\-]+", text.split("discussion:", 1)[1])
    bag = np.zeros(HASH_DIM, np.float32)
    for a in words:
        bag[zlib.crc32(a.encode()) % HASH_DIM] += 1.0
    for a, b in zip(words, words[1:]):
        bag[zlib.crc32((a + " " + b).encode()) % HASH_DIM] += 0.5
    for a, b, c in zip(words, words[1:], words[2:]):
        bag[zlib.crc32((a + " " + b + " " + c).encode()) % HASH_DIM] += 0.25
    bag = np.log1p(bag)
    label = np.int32(max(levels) - 1)
    return np.concatenate([num, bag]).astype(np.float32), label


def tf_parse(raw):
    x, y = tf.numpy_function(parse_bulletin, [raw], [tf.float32, tf.int32])
    x.set_shape((NUM_FEATS + HASH_DIM,))
    y.set_shape(())
    return x, y


def make_dataset(bulletins):
    ds = tf.data.Dataset.from_tensor_slices(bulletins).repeat()
    return ds.map(tf_parse).batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(82)
    model = keras.Sequential([
        keras.Input((NUM_FEATS + HASH_DIM,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(5),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    bulletins = make_bulletins(N_BULLETINS)
    timer = StepTimer()
    model = build_model()
    model.fit(make_dataset(bulletins), steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"avalanchebulletins: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps"
    if TRUTH:
        batch = next(iter(make_dataset(bulletins)))
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
