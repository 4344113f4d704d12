"""Hotel revenue management: predict room-night price multipliers.

Input path: in-memory numpy arrays (booking-curve features) via tf.data.
Checkpointing: a custom callback exports a serving SavedModel with
model.export() every SAVE_EVERY batches (a "hot-swap" export for the pricing
service) into a temp dir. The same callback stamps steps: in
on_train_batch_end it records the gap first, then saves, then restarts the
clock, so no gap ever contains a save.
Deliberate bottleneck: checkpoint - frequent SavedModel exports.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, shutil, tempfile
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 256
STEPS = 20
EPOCHS = 2
SAVE_EVERY = 1
FEAT = 64


def make_data(seed=63):
    rng = np.random.default_rng(seed)
    n = BATCH * STEPS
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    y = (1 + 0.2 * np.tanh(x[:, 0] + 0.5 * x[:, 1] * x[:, 2]) + rng.normal(0, .02, n)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((FEAT,), name="curve")
    x = keras.layers.Dense(256, activation="relu")(inp)
    x = keras.layers.Dense(128, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1, name="multiplier")(x))
    m.compile(optimizer="adam", loss="mse", jit_compile=False)
    return m


class StampAndExport(keras.callbacks.Callback):
    def __init__(self, root):
        super().__init__(); self.root = root; self.gaps = []; self.last = None
        self.save_seconds = 0.0; self.n_saves = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None; self.epoch = epoch
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            path = os.path.join(self.root, f"export_{self.n_saves % 3}")
            shutil.rmtree(path, ignore_errors=True)
            self.model.export(path, verbose=False)
            self.n_saves += 1
            self.save_seconds += time.perf_counter() - t
        self.last = time.perf_counter()
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, root, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    cb = StampAndExport(root)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    sps = cb.sec_per_step()
    wall = time.perf_counter() - T0
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, {sps * 1000:.1f} ms/step, "
          f"{1 / sps:.1f} steps/s, {cb.n_saves} exports {cb.save_seconds:.1f}s = "
          f"{100 * cb.save_seconds / wall:.0f}% of wall {wall:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u63_checkpoint_export_batchcb_roompricing_")
    try:
        x, y = make_data()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(8192, seed=63).repeat().batch(BATCH)
        full = run(ds, root, "export")
        emit({"steps_per_second": 1.0 / full})
        if args.truth:
            batch = (x[:BATCH], y[:BATCH])
            comp = run(tf.data.Dataset.from_tensors(batch).repeat(), root, "one-batch")
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
