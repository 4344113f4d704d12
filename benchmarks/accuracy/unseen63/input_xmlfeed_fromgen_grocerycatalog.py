"""Grocery catalog: classify products into aisles from an XML product feed.

Input path: a Python generator parses one <product> XML record at a time with
xml.etree.ElementTree, hashes name/brand/tag tokens and derives nutrition and
price features; tf.data.Dataset.from_generator feeds model.fit.
Deliberate bottleneck: per-record XML parsing and feature hashing in Python.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, zlib
import xml.etree.ElementTree as ET
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 128
STEPS = 40
EPOCHS = 3
HASH_DIM = 1024
N_AISLES = 24
N_RECORDS = 4000

WORDS = ("organic whole milk oat bread sourdough rye apple gala fuji banana tomato roma basil "
         "cheddar brie yogurt greek butter salted olive oil rice basmati pasta penne chicken thigh "
         "salmon fillet tofu firm almond snack chips salsa cola sparkling water coffee beans tea "
         "green chocolate dark cereal granola frozen pizza peas spinach detergent soap shampoo").split()
BRANDS = ["FreshCo", "Valley", "NordFarm", "Casa", "GreenLeaf", "Harbor", "Golden", "Kite"]
UNITS = ["g", "kg", "ml", "l", "each"]


def make_feed(seed=63):
    rng = np.random.default_rng(seed)
    recs = []
    for i in range(N_RECORDS):
        aisle = int(rng.integers(N_AISLES))
        name = " ".join(WORDS[(aisle * 3 + int(k)) % len(WORDS)] for k in rng.integers(0, 9, size=4))
        tags = "".join(f"<tag>{WORDS[int(t)]}</tag>" for t in rng.integers(0, len(WORDS), size=6))
        recs.append(
            f"<product sku='SKU{i:06d}'><name>{name}</name><brand>{BRANDS[i % len(BRANDS)]}</brand>"
            f"<price currency='EUR'>{rng.uniform(0.4, 40):.2f}</price><unit>{UNITS[aisle % 5]}</unit>"
            f"<size>{rng.integers(1, 2000)}</size><aisle>{aisle}</aisle>"
            f"<nutrition><kcal>{rng.integers(0, 900)}</kcal><fat>{rng.uniform(0, 60):.1f}</fat>"
            f"<sugar>{rng.uniform(0, 50):.1f}</sugar><protein>{rng.uniform(0, 40):.1f}</protein></nutrition>"
            f"<tags>{tags}</tags></product>")
    return recs


def parse_record(xml_text):
    root = ET.fromstring(xml_text)
    x = np.zeros(HASH_DIM + 8, np.float32)
    toks = (root.findtext("name") or "").lower().split()
    toks += ["brand:" + (root.findtext("brand") or "")]
    toks += ["tag:" + t.text for t in root.iter("tag")]
    toks += [a + "_" + b for a, b in zip(toks, toks[1:])]
    for t in toks:
        x[zlib.crc32(t.encode()) % HASH_DIM] += 1.0
    nut = root.find("nutrition")
    x[HASH_DIM + 0] = float(root.findtext("price")) / 40.0
    x[HASH_DIM + 1] = np.log1p(float(root.findtext("size"))) / 8.0
    x[HASH_DIM + 2] = UNITS.index(root.findtext("unit")) / 5.0
    for j, k in enumerate(("kcal", "fat", "sugar", "protein")):
        x[HASH_DIM + 3 + j] = float(nut.findtext(k)) / 100.0
    return x, np.int32(root.findtext("aisle"))


def gen(recs):
    i = 0
    while True:
        yield parse_record(recs[i % len(recs)])
        i += 1


def build_model():
    m = keras.Sequential([
        keras.Input((HASH_DIM + 8,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_AISLES),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


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
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    sps = timer.sec_per_step()
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    recs = make_feed()
    sig = (tf.TensorSpec((HASH_DIM + 8,), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(lambda: gen(recs), output_signature=sig).batch(BATCH)
    full = run(ds, "xmlfeed")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        xs, ys = zip(*(parse_record(r) for r in recs[:BATCH]))
        batch = (np.stack(xs), np.array(ys, np.int32))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
