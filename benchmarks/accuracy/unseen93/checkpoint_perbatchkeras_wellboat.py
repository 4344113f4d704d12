import time; T0 = time.perf_counter()
"""Well-boat live-fish transport: a model predicting fish stress (lactate
class) from well-water sensors during the voyage (O2, CO2, temperature,
pH, pump flow over a 30-minute window) is trained with model.fit while a
callback writes the full model to a .keras archive after every batch, so the
skipper's onboard system always has the freshest model."""
import os, sys, json, shutil, tempfile
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

SAVE_SECONDS = [0.0]

class StampAndSave(keras.callbacks.Callback):
    """Stamps step ends and saves the full model every batch; the clock is
    restarted after each save so step gaps never contain a save."""
    def __init__(self, path):
        super().__init__(); self.path = path; self.gaps = []; self.last = None; self.saves = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        self.saves += 1
        self.last = time.perf_counter()
        SAVE_SECONDS[0] += self.last - now
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

BATCH = 16
STEPS = 50
EPOCHS = 3
WINDOW = 30
CH = 5

rng = np.random.default_rng(93)
X = rng.normal(size=(BATCH * STEPS, WINDOW * CH)).astype(np.float32)
Y = np.digitize(X[:, 0] + 0.5 * X[:, 7], [-0.5, 0.5]).astype(np.int32)

def make_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH).repeat().prefetch(2)

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((WINDOW * CH,)),
        keras.layers.Dense(3072, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m

def run(ds, root, tag):
    model = build_model()
    cb = StampAndSave(os.path.join(root, f"wellboat_stress_{tag}.keras"))
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return cb.seconds_per_step(), cb.saves

root = tempfile.mkdtemp(prefix="u93_checkpoint_perbatchkeras_wellboat_")
try:
    full, saves = run(make_ds(), root, "live")
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"[wellboat] fit with per-batch .keras save: {full*1000:.2f} ms/step, {saves} saves, "
          f"save {SAVE_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*SAVE_SECONDS[0]/wall:.1f}%")
    if TRUTH:
        batch = next(iter(make_ds()))
        compute, _ = run(tf.data.Dataset.from_tensors(batch).repeat(), root, "truth")
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"[wellboat] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}; "
              f"save both runs {SAVE_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*SAVE_SECONDS[0]/wall:.1f}%")
finally:
    shutil.rmtree(root, ignore_errors=True)
