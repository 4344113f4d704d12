import time; T0 = time.perf_counter()
"""Feed barge dispenser logs: a keras.utils.PyDataset (workers=1) decodes
JSON dispenser events per pen and builds feeding-session features in
__getitem__; model.fit predicts pellet waste from the session."""
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

BATCH = 32
STEPS = 150
EPOCHS = 3
EVENTS = 80           # dispenser events per feeding session
NFEAT = 6 * 40
FEEDS = ["Skretting Optiline 9mm", "BioMar Energy 12mm", "Cargill Rapid 7mm"]

def session_events(rng, idx):
    """Raw dispenser log for one pen feeding session (JSON lines)."""
    pen = f"P{idx % 14 + 1:02d}"
    feed = FEEDS[idx % 3]
    t = 6 * 3600.0
    ev = []
    for k in range(EVENTS):
        t += rng.uniform(20, 60)
        ev.append(json.dumps({"barge": "Nordbarge-3", "pen": pen, "feed": feed,
                              "ts": round(t, 1), "rotor_rpm": round(rng.gauss(620, 40), 1),
                              "kg": round(abs(rng.gauss(4.2, 1.1)), 3),
                              "blower_kpa": round(rng.gauss(38, 3), 2),
                              "pellet_cam": round(rng.random(), 4)}))
    return ev

class DispenserSessions(keras.utils.PyDataset):
    def __init__(self, n_batches, **kw):
        super().__init__(**kw)
        self.n = n_batches
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        rng = random.Random(9300 + i)
        xs, ys = [], []
        for j in range(BATCH):
            recs = [json.loads(s) for s in session_events(rng, i * BATCH + j)]
            recs.sort(key=lambda r: r["ts"])
            kg = [r["kg"] for r in recs]; rpm = [r["rotor_rpm"] for r in recs]
            kpa = [r["blower_kpa"] for r in recs]; cam = [r["pellet_cam"] for r in recs]
            dt = [b["ts"] - a["ts"] for a, b in zip(recs, recs[1:])] + [30.0]
            cum = []
            s = 0.0
            for v in kg:
                s += v; cum.append(s)
            rows = []
            for series in (kg, rpm, kpa, cam, dt, cum):
                step = len(series) // 40
                rows.extend(sum(series[q*step:(q+1)*step]) / step for q in range(40))
            x = np.array(rows, dtype=np.float32)
            xs.append((x - x.mean()) / (x.std() + 1e-6))
            ys.append(float(np.mean(cam) > 0.5))
        return np.stack(xs), np.array(ys, dtype=np.float32)

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1280, activation="relu"),
        keras.layers.Dense(1280, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m

def run(data):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()

full = run(DispenserSessions(STEPS, workers=1))
emit({"steps_per_second": 1.0 / full})
print(f"[feedbarge] PyDataset fit: {full*1000:.2f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    xb, yb = DispenserSessions(STEPS, workers=1)[0]
    compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[feedbarge] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
