"""Housing listings: regress log asking price from free-text property listings.

Input path: a plain Python loop builds every batch from raw listing texts:
regexes pull bedrooms, bathrooms, floor area (sq ft or m2), year built, floor,
parking, energy label and amenities; description words and bigrams are
hashed. The numpy batch goes straight into a tf.function GradientTape step.
Deliberate bottleneck: per-listing regex extraction and hashing in Python.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, re, zlib
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 96
STEPS = 300
HASH_DIM = 1024
N_LISTINGS = 5000

BED_RE = re.compile(r"(\d+)\s*(?:bed(?:room)?s?|BR)\b", re.I)
BATH_RE = re.compile(r"(\d+(?:\.5)?)\s*(?:bath(?:room)?s?|BA)\b", re.I)
AREA_RE = re.compile(r"([\d,]+)\s*(sq\.?\s?ft|sqft|m2|m²)", re.I)
YEAR_RE = re.compile(r"(?:built|constructed) in (\d{4})", re.I)
FLOOR_RE = re.compile(r"(\d+)(?:st|nd|rd|th) floor", re.I)
ENERGY_RE = re.compile(r"energy (?:label|rating)[: ]+([A-G])", re.I)
AMEN = ["balcony", "garden", "elevator", "garage", "pool", "fireplace", "renovated", "sea view",
        "doorman", "storage"]
ADJ = ["bright", "spacious", "cozy", "modern", "charming", "quiet", "sunny", "stylish", "family", "luxury"]
HOODS = ["Old Town", "Riverside", "Harbour", "Uptown", "Parkside", "Station Quarter", "Hillcrest"]


def make_listings(seed=63):
    rng = np.random.default_rng(seed)
    texts, prices = [], []
    for i in range(N_LISTINGS):
        beds = int(rng.integers(1, 6)); baths = int(rng.integers(1, 4)) + 0.5 * (rng.random() < .3)
        area = int(rng.integers(35, 260)); year = int(rng.integers(1890, 2024)); hood = int(rng.integers(len(HOODS)))
        am = [AMEN[int(k)] for k in rng.choice(len(AMEN), size=int(rng.integers(0, 5)), replace=False)]
        sqft = rng.random() < 0.5
        area_txt = f"{int(area * 10.76):,} sq ft" if sqft else f"{area} m2"
        words = " ".join(ADJ[int(k)] for k in rng.integers(0, len(ADJ), size=8))
        texts.append(f"{words.capitalize()} {beds} bedroom, {baths:g} bath apartment in {HOODS[hood]}. "
                     f"{area_txt}, built in {year}, {int(rng.integers(1, 12))}th floor. "
                     f"Energy label: {'ABCDEFG'[int(rng.integers(7))]}. Features: {', '.join(am) or 'none'}. "
                     f"Contact agent ref #{i:06d}.")
        prices.append(11.5 + 0.008 * area + 0.05 * beds + 0.1 * hood / 7 + 0.04 * len(am) + rng.normal(0, .1))
    return texts, np.array(prices, np.float32)


def featurize(text):
    x = np.zeros(HASH_DIM + 10, np.float32)
    m = BED_RE.search(text); x[HASH_DIM] = int(m.group(1)) / 5 if m else 0
    m = BATH_RE.search(text); x[HASH_DIM + 1] = float(m.group(1)) / 4 if m else 0
    m = AREA_RE.search(text)
    if m:
        a = float(m.group(1).replace(",", ""))
        x[HASH_DIM + 2] = (a / 10.76 if "ft" in m.group(2).lower() else a) / 250
    m = YEAR_RE.search(text); x[HASH_DIM + 3] = (int(m.group(1)) - 1900) / 125 if m else 0
    m = FLOOR_RE.search(text); x[HASH_DIM + 4] = int(m.group(1)) / 12 if m else 0
    m = ENERGY_RE.search(text); x[HASH_DIM + 5] = "ABCDEFG".index(m.group(1).upper()) / 6 if m else 0
    low = text.lower()
    x[HASH_DIM + 6] = sum(a in low for a in AMEN) / 5
    toks = re.findall(r"[a-z]+", low)
    for t in toks + [a + "_" + b for a, b in zip(toks, toks[1:])]:
        x[zlib.crc32(t.encode()) % HASH_DIM] += 1.0
    return x


def build_model():
    return keras.Sequential([
        keras.Input((HASH_DIM + 10,)),
        keras.layers.Dense(320, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def train(batch_fn, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)[:, 0]
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    t = time.perf_counter()
    for i in range(STEPS):
        x, y = batch_fn(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    sps = float(np.mean(gaps))
    print(f"[{label}] {STEPS} steps in {time.perf_counter() - t:.1f}s, loss {loss:.4f}, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    texts, prices = make_listings()
    rng = np.random.default_rng(7)

    def python_batch(i):
        idx = rng.integers(0, len(texts), size=BATCH)
        return np.stack([featurize(texts[j]) for j in idx]), prices[idx]

    full = train(python_batch, "tape-loop")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        fixed = python_batch(0)
        comp = train(lambda i: fixed, "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
