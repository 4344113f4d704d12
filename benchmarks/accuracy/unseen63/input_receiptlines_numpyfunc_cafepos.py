"""Cafe point-of-sale: predict the daypart of a ticket from its printed receipt.

Input path: raw receipt texts (one string per ticket) go through
tf.data.Dataset.from_tensor_slices -> batch -> map(tf.numpy_function(parse)),
where parse() splits lines, regex-parses "qty x item @ price" rows, modifiers,
totals, VAT and the payment footer, and hashes items into a count vector.
model.fit consumes the dataset (no prefetch, sequential map).
Deliberate bottleneck: Python receipt parsing inside tf.numpy_function.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, re, zlib
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 128
STEPS = 150
EPOCHS = 3
HASH_DIM = 1024
N_RECEIPTS = 6000
N_CLASSES = 4  # breakfast, lunch, afternoon, evening

ITEMS = ["Flat White", "Cappuccino", "Oat Latte", "Espresso", "Croissant", "Pain au Chocolat",
         "Avocado Toast", "Club Sandwich", "Soup of the Day", "Caesar Salad", "Brownie", "Carrot Cake",
         "Iced Tea", "Lemonade", "Glass of Wine", "Craft Beer", "Cheese Board", "Bagel Lox"]
MODS = ["+ extra shot", "+ oat milk", "- no sugar", "+ large", "+ takeaway cup"]
LINE_RE = re.compile(r"^(\d+) x (.+?) @ (\d+\.\d\d)$")
MOD_RE = re.compile(r"^\s+([+-]) (.+)$")
TOTAL_RE = re.compile(r"^TOTAL\s+EUR\s+(\d+\.\d\d)$")
TIME_RE = re.compile(r"^(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d)$")


def make_receipts(seed=63):
    rng = np.random.default_rng(seed)
    out = []
    for r in range(N_RECEIPTS):
        hour = int(rng.integers(7, 23))
        lines = [f"CAFE EXAMPLE #{int(rng.integers(1, 9))}", f"TICKET {r:07d}",
                 f"{int(rng.integers(1, 28)):02d}/{int(rng.integers(1, 12)):02d}/2025 {hour:02d}:{int(rng.integers(60)):02d}"]
        total = 0.0
        for _ in range(int(rng.integers(2, 9))):
            it = ITEMS[(int(rng.integers(6)) + (hour - 7) // 4 * 4) % len(ITEMS)]
            q = int(rng.integers(1, 4)); p = float(rng.integers(150, 1400)) / 100
            total += q * p
            lines.append(f"{q} x {it} @ {p:.2f}")
            if rng.random() < 0.4:
                lines.append("   " + MODS[int(rng.integers(len(MODS)))])
        lines += [f"TOTAL   EUR {total:.2f}", f"VAT 10%  {total / 11:.2f}",
                  ["PAID CARD ****" + str(int(rng.integers(1000, 9999))), "PAID CASH"][int(rng.integers(2))]]
        out.append("\n".join(lines))
    return out


def parse_one(text):
    x = np.zeros(HASH_DIM + 6, np.float32)
    hour = 12
    n_items = 0
    for line in text.split("\n"):
        m = LINE_RE.match(line)
        if m:
            q, item, price = int(m.group(1)), m.group(2).lower(), float(m.group(3))
            n_items += q
            for t in ["item:" + item] + ["w:" + w for w in item.split()]:
                x[zlib.crc32(t.encode()) % HASH_DIM] += q
            x[HASH_DIM + 0] += q * price / 50.0
            continue
        m = MOD_RE.match(line)
        if m:
            x[zlib.crc32(("mod:" + m.group(2)).encode()) % HASH_DIM] += 1.0
            continue
        m = TOTAL_RE.match(line)
        if m:
            x[HASH_DIM + 1] = float(m.group(1)) / 100.0
            continue
        m = TIME_RE.match(line)
        if m:
            hour = int(m.group(4))
            x[HASH_DIM + 2] = int(m.group(1)) / 31.0
            x[HASH_DIM + 3] = int(m.group(2)) / 12.0
        elif line.startswith("PAID"):
            x[HASH_DIM + 4] = 1.0 if "CARD" in line else 0.0
    x[HASH_DIM + 5] = n_items / 10.0
    label = 0 if hour < 11 else 1 if hour < 15 else 2 if hour < 18 else 3
    return x, label


def parse_batch(texts):
    xs, ys = zip(*(parse_one(t.decode()) for t in texts))
    return np.stack(xs), np.array(ys, np.int32)


def tf_parse(texts):
    x, y = tf.numpy_function(parse_batch, [texts], (tf.float32, tf.int32))
    x.set_shape((None, HASH_DIM + 6)); y.set_shape((None,))
    return x, y


def build_model():
    m = keras.Sequential([
        keras.Input((HASH_DIM + 6,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(N_CLASSES),
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
    receipts = make_receipts()
    ds = (tf.data.Dataset.from_tensor_slices(receipts).shuffle(2048, seed=63).repeat()
          .batch(BATCH).map(tf_parse))
    full = run(ds, "numpy_function")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = parse_batch([r.encode() for r in receipts[:BATCH]])
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
