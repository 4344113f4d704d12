import time; T0 = time.perf_counter()
"""Net-pen dissolved-oxygen probes: a Python generator parses raw probe
telemetry lines (per-sample string formatting + parsing + rolling features)
and feeds model.fit through tf.data.Dataset.from_generator."""
import os, sys, json, math, random
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
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

BATCH = 64
STEPS = 110
EPOCHS = 3
READINGS = 96          # one reading every 15 min over a day
SITES = ["Kvaroy", "Hitra", "Froya", "Smola", "Austevoll"]

def probe_lines(rng):
    """Raw telemetry as it arrives from the cage probe logger."""
    site = rng.choice(SITES)
    pen = rng.randint(1, 12)
    base = rng.uniform(6.5, 9.5)
    lines = []
    for i in range(READINGS):
        temp = 8.0 + 3.0 * math.sin(i / READINGS * 2 * math.pi) + rng.gauss(0, 0.3)
        do = base - 0.12 * (temp - 8.0) + rng.gauss(0, 0.25) - (0.8 if 40 < i < 60 else 0.0) * rng.random()
        sat = do / (14.6 - 0.39 * temp) * 100.0
        lines.append(f"{site};pen{pen:02d};t={i*15:05d};DO={do:.3f}mg/L;sat={sat:.2f}%;T={temp:.2f}C;status=OK")
    return lines

def parse(lines):
    do, sat, temp = [], [], []
    for ln in lines:
        fields = dict(kv.split("=") for kv in ln.split(";")[2:])
        do.append(float(fields["DO"].rstrip("mg/L")))
        sat.append(float(fields["sat"].rstrip("%")))
        temp.append(float(fields["T"].rstrip("C")))
    feats = []
    for k in range(len(do)):
        lo = max(0, k - 4)
        win = do[lo:k + 1]
        m = sum(win) / len(win)
        v = sum((w - m) ** 2 for w in win) / len(win)
        feats.append(m); feats.append(math.sqrt(v))
    x = np.array(do + sat + temp + feats, dtype=np.float32)
    x = (x - x.mean()) / (x.std() + 1e-6)
    y = np.float32(1.0 if min(do) < 6.0 else 0.0)
    return x, y

NFEAT = READINGS * 5

def gen():
    rng = random.Random(93)
    while True:
        yield parse(probe_lines(rng))

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m

def make_ds():
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((NFEAT,), tf.float32), tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH).prefetch(2)

def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()

full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[netpenoxygen] from_generator fit: {full*1000:.2f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[netpenoxygen] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
