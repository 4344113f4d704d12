"""Fan static-pressure regressor for HVAC duct networks: a custom GradientTape loop fed
from Python, which json-decodes duct-run records and computes Darcy-Weisbach losses per batch."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

SEGS = 32
BATCH = 32
STEPS = 30
EPOCHS = 3
N_NETS = 800
FITTINGS = {"elbow90": 0.3, "tee_branch": 1.0, "tee_main": 0.2, "reducer": 0.1, "damper": 0.5, "none": 0.0}


def make_duct_json(n, seed=13):
    rng = np.random.default_rng(seed)
    out = []
    names = list(FITTINGS)
    for k in range(n):
        segs = []
        for s in range(int(rng.integers(12, SEGS + 1))):
            segs.append({"id": f"D{k}-{s}", "length_m": round(float(rng.uniform(0.5, 12)), 3),
                         "diameter_mm": int(rng.choice([150, 200, 250, 315, 400, 500])),
                         "flow_m3h": round(float(rng.uniform(200, 4000)), 1),
                         "fitting": names[int(rng.integers(0, len(names)))],
                         "material": "galv" if rng.random() < 0.8 else "flex"})
        out.append(json.dumps({"project": "tower-B", "floor": int(rng.integers(1, 40)), "segments": segs}))
    return out


def decode_network(txt, rng):
    net = json.loads(txt)
    feats = np.zeros((SEGS, 6), np.float32)
    total = 0.0
    for i, s in enumerate(net["segments"]):
        d = s["diameter_mm"] / 1000.0
        area = np.pi * d * d / 4.0
        v = s["flow_m3h"] / 3600.0 / area
        rough = 0.00015 if s["material"] == "galv" else 0.003
        re = max(v * d / 1.5e-5, 1.0)
        f = 0.25 / (np.log10(rough / (3.7 * d) + 5.74 / re ** 0.9)) ** 2
        vp = 0.5 * 1.2 * v * v
        dp = f * s["length_m"] / d * vp + FITTINGS[s["fitting"]] * vp
        total += dp
        feats[i] = (s["length_m"] / 12, d * 2, v / 20, np.log1p(re) / 15, FITTINGS[s["fitting"]], rough * 300)
    feats *= rng.uniform(0.97, 1.03)
    return feats, np.float32(np.log1p(total) + net["floor"] * 0.01)


def make_batch(docs, rng):
    ids = rng.integers(0, len(docs), BATCH)
    xs, ys = zip(*(decode_network(docs[j], rng) for j in ids))
    return np.stack(xs), np.array(ys, np.float32)[:, None]


def build_model():
    inp = keras.Input((SEGS, 6))
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x))


def train(batches):
    """batches: callable returning (x, y) numpy arrays for each step."""
    tf.random.set_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for _ in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = batches()
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), len(gaps), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_ductjson_tapeloop_hvacnetworks_")
    try:
        docs = make_duct_json(N_NETS)
        rng = np.random.default_rng(17)
        full, n, loss = train(lambda: make_batch(docs, rng))
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_ductjson_tapeloop_hvacnetworks] full {full*1000:.1f} ms/step ({1.0/full:.2f} steps/s) "
              f"over {n} gaps, loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            fixed = make_batch(docs, np.random.default_rng(99))
            comp, _, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_ductjson_tapeloop_hvacnetworks] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
