"""Restaurant floor: predict table dwell time (turnover) from seating features.

Input path: in-memory numpy arrays; a modest training set via tf.data, and a
very large hold-out set of past seatings (numpy) that a HoldoutEval callback
scores with model.evaluate(batch_size=256) at every epoch end.
Deliberate bottleneck: evaluation - the per-epoch hold-out evaluation.
Evaluation runs in on_epoch_end, outside the within-epoch step gaps; the
callback times each evaluate() call (adapter build, tracing and the batches).
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 128
STEPS = 30
EPOCHS = 3
N_TRAIN = BATCH * STEPS
N_VAL = 300_000
FEAT = 40


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    party = rng.integers(1, 9, size=n)
    x[:, 0] = party / 8
    y = (45 + 6 * party + 10 * x[:, 1] - 5 * x[:, 2] + rng.normal(0, 5, size=n)).astype(np.float32)
    return x, y / 60


def build_model():
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"], jit_compile=False)
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


class HoldoutEval(keras.callbacks.Callback):
    def __init__(self, val):
        super().__init__(); self.val = val; self.seconds = 0.0; self.history = []
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        res = self.model.evaluate(self.val[0], self.val[1], batch_size=256, verbose=0, return_dict=True)
        self.seconds += time.perf_counter() - t
        self.history.append(res)


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, val, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer, ev = StepTimer(), HoldoutEval(val)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, ev], verbose=0)
    sps = timer.sec_per_step()
    wall = time.perf_counter() - T0
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, {sps * 1000:.1f} ms/step, "
          f"{1 / sps:.1f} steps/s, eval {ev.seconds:.1f}s = {100 * ev.seconds / wall:.0f}% of wall {wall:.1f}s",
          flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_data(N_TRAIN, 63)
    val = make_data(N_VAL, 64)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=63).repeat().batch(BATCH)
    full = run(ds, val, "evaluate-callback")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = (x[:BATCH], y[:BATCH])
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), val, "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
