import time; T0 = time.perf_counter()
"""Workshop order slips -> turnaround class.  Order slips for folded models
(stock, sheet size, quantity, model name, due date, notes) are written as text;
a Python loop parses each slip with regular expressions and pushes the batch
through model.train_on_batch."""
import os, sys, json, re, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

STOCKS = ["kami", "washi", "tant", "elephant hide", "tissue foil", "kraft", "unryu", "lokta"]
MODELS = ["crane", "lily", "frog", "kusudama", "dragon", "rose", "box", "star", "elephant",
          "modular cube", "flapping bird", "jumping frog", "lotus", "tessellation tile", "butterfly"]
NOTE_WORDS = ["wedding", "display", "gift", "bulk", "gold", "metallic", "rush", "school", "wetfold",
              "signed", "framed", "mounted", "hotel", "window", "exhibition", "rainbow"]
N_HASH = 1024
N_FEAT = len(STOCKS) + 4 + N_HASH
BATCH = 64
STEPS = 1500
SLIP_RE = re.compile(
    r"ORDER #(?P<num>\d+)\s+DATE (?P<d>\d{4}-\d{2}-\d{2})\s+DUE (?P<due>\d{4}-\d{2}-\d{2})\s+"
    r"MODEL: (?P<model>[a-z ]+?)\s+x(?P<qty>\d+)\s+STOCK: (?P<stock>[a-z ]+?) (?P<w>\d+)x(?P<h>\d+)cm\s+"
    r"NOTES: (?P<notes>.*)$", re.S)
DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")

def write_slip(rng):
    day = int(rng.integers(1, 300)); lead = int(rng.integers(1, 40))
    qty = int(rng.integers(1, 1000)); w = int(rng.choice([7, 15, 24, 35, 50]))
    stock = STOCKS[int(rng.integers(len(STOCKS)))]; model = MODELS[int(rng.integers(len(MODELS)))]
    notes = " ".join(NOTE_WORDS[int(i)] for i in rng.integers(0, len(NOTE_WORDS), int(rng.integers(5, 16))))
    d0 = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}"
    d1 = f"2026-{1 + (day + lead) // 28:02d}-{1 + (day + lead) % 28:02d}"
    text = (f"ORDER #{int(rng.integers(10000, 99999))}  DATE {d0}  DUE {d1}\n"
            f"MODEL: {model}   x{qty}\nSTOCK: {stock} {w}x{w}cm\nNOTES: {notes}")
    effort = qty * (1 + MODELS.index(model) % 5) / lead
    label = 0 if effort < 20 else (1 if effort < 150 else 2)
    return text, label

def day_of(s):
    y, m, d = (int(v) for v in DATE_RE.match(s).groups())
    return (m - 1) * 28 + d

def parse_slip(text):
    m = SLIP_RE.search(text)
    vec = np.zeros(N_FEAT, np.float32)
    vec[STOCKS.index(m["stock"])] = 1.0
    o = len(STOCKS)
    lead = day_of(m["due"]) - day_of(m["d"])
    vec[o] = np.log1p(int(m["qty"])); vec[o + 1] = int(m["w"]) / 50.0
    vec[o + 2] = lead / 40.0; vec[o + 3] = 1.0 / max(lead, 1)
    words = m["model"].split() + m["notes"].split()
    for a in words:
        vec[o + 4 + zlib.crc32(a.encode()) % N_HASH] += 1.0
    for a, b in zip(words, words[1:]):
        vec[o + 4 + zlib.crc32(f"{a}_{b}".encode()) % N_HASH] += 1.0
    for w in words:
        w = "<" + w + ">"
        for k in range(len(w) - 2):
            vec[o + 4 + zlib.crc32(w[k:k + 3].encode()) % N_HASH] += 0.5
    return vec

def next_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        text, label = write_slip(rng)
        xs.append(parse_slip(text)); ys.append(label)
    return np.stack(xs), np.asarray(ys, np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(3),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model

def train(batch_source):
    model = build_model()
    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        out = model.train_on_batch(x, y)
        loss = float(np.asarray(out).ravel()[0])
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss

rng = np.random.default_rng(98)
full_s, loss = train(lambda: next_batch(rng))
emit({"steps_per_second": 1.0 / full_s})
print(f"orderslips: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next_batch(np.random.default_rng(7))
    comp_s, _ = train(lambda: (xb, yb))
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"orderslips truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
