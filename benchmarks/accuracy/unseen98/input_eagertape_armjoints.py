import time; T0 = time.perf_counter()
"""Folding-robot arm joint logs -> fold primitive.  The robot controller writes
plain-text joint logs; a Python loop parses each log window line by line and
feeds a custom @tf.function GradientTape training step."""
import os, sys, json
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

FOLDS = ["valley", "mountain", "inside_reverse", "squash", "petal", "crimp"]
WINDOW = 64        # log lines per window
N_JOINTS = 6
BATCH = 48
STEPS = 400

def write_log_window(rng):
    """One window of controller log text for a single fold primitive."""
    fold = int(rng.integers(len(FOLDS)))
    t = np.arange(WINDOW) * 0.008
    phase = rng.uniform(0, 2 * np.pi, N_JOINTS)
    amp = 5.0 + 3.0 * np.arange(N_JOINTS) * (1 + fold % 3)
    ang = amp * np.sin(2 * np.pi * (0.8 + 0.3 * fold) * t[:, None] + phase) + rng.normal(0, 0.4, (WINDOW, N_JOINTS))
    grip = (np.sin(2 * np.pi * 0.5 * (fold + 1) * t) > 0).astype(int)
    lines = []
    for k in range(WINDOW):
        joints = " ".join(f"j{j+1}={ang[k, j]:+.3f}deg" for j in range(N_JOINTS))
        lines.append(f"[{t[k]:08.3f}s] ARM2 state=RUN {joints} grip={grip[k]} torque={rng.uniform(0.1, 2.0):.2f}Nm")
    return "\n".join(lines), fold

def parse_log_window(text):
    rows = []
    for line in text.split("\n"):
        fields = line.split()
        vals = []
        for f in fields[3:]:
            key, _, val = f.partition("=")
            if key.startswith("j"):
                vals.append(float(val[:-3]))
            elif key == "grip":
                vals.append(float(val))
            elif key == "torque":
                vals.append(float(val[:-2]))
        rows.append(vals)
    arr = np.asarray(rows, np.float32)
    arr[:, :N_JOINTS] /= 30.0
    return arr

def next_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        text, fold = write_log_window(rng)
        xs.append(parse_log_window(text)); ys.append(fold)
    return np.stack(xs), np.asarray(ys, np.int32)

def build_model():
    keras.utils.set_random_seed(98)
    return keras.Sequential([
        keras.Input((WINDOW, N_JOINTS + 2)),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(192, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(len(FOLDS)),
    ])

def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss

rng = np.random.default_rng(98)
full_s, loss = train(lambda: next_batch(rng))
emit({"steps_per_second": 1.0 / full_s})
print(f"armjoints: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next_batch(np.random.default_rng(7))
    comp_s, _ = train(lambda: (xb, yb))
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"armjoints truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
