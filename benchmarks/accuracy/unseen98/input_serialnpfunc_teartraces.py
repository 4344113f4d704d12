import time; T0 = time.perf_counter()
"""Paper-stock tear-test traces -> stock grade.  Each tear trace (force vs
displacement from an Elmendorf-style tester) is synthesised and turned into a
short-time spectrum by tf.numpy_function inside a serial tf.data map."""
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

TRACE_LEN = 2048
FRAME = 128
HOP = 64
N_FRAMES = (TRACE_LEN - FRAME) // HOP + 1
N_BINS = FRAME // 2 + 1
STOCKS = ["kami", "washi", "tant", "elephant_hide", "tissue_foil", "kraft"]
BATCH = 32
STEPS = 120
EPOCHS = 4

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
        return float(np.mean(g))

WINDOW = np.hanning(FRAME).astype(np.float32)

def tear_trace_features(index):
    """Synthesise one tear trace and return its log short-time spectrum."""
    rng = np.random.default_rng(int(index) * 7919 + 98)
    stock = int(rng.integers(len(STOCKS)))
    fibre_len = 0.5 + 0.4 * stock
    disp = np.linspace(0.0, 60.0, TRACE_LEN)
    force = 0.8 + 0.15 * stock + 0.02 * disp
    # fibre pull-out events: sawtooth drops whose spacing depends on fibre length
    n_events = int(rng.integers(6, 18))
    centres = np.sort(rng.uniform(0, 60, n_events))
    for c in centres:
        force -= (0.05 + 0.05 * rng.random()) * np.exp(-np.abs(disp - c) / fibre_len)
    force += rng.normal(0.0, 0.03, TRACE_LEN)
    # smooth like the tester's anti-alias filter, then remove drift
    force = np.convolve(force, np.ones(9) / 9.0, mode="same")
    force -= np.polyval(np.polyfit(disp, force, 2), disp)
    frames = np.lib.stride_tricks.sliding_window_view(force, FRAME)[::HOP] * WINDOW
    spec = np.log1p(np.abs(np.fft.rfft(frames, axis=1))).astype(np.float32)
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return spec, np.int32(stock)

def parse(index):
    spec, label = tf.numpy_function(tear_trace_features, [index], [tf.float32, tf.int32])
    spec.set_shape((N_FRAMES, N_BINS)); label.set_shape(())
    return spec, label

def make_dataset(offset):
    ds = tf.data.Dataset.range(offset, offset + 10_000_000)
    ds = ds.map(parse)  # serial: no num_parallel_calls
    return ds.batch(BATCH).prefetch(2)

def build_model():
    keras.utils.set_random_seed(98)
    model = keras.Sequential([
        keras.Input((N_FRAMES, N_BINS)),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(256, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(len(STOCKS)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model

def train(data):
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    print(f"  fit {time.perf_counter()-t:.1f} s, sum gaps {sum(timer.gaps):.1f} s")
    return timer.seconds_per_step(), hist.history["loss"][-1]

full_s, loss = train(make_dataset(0))
emit({"steps_per_second": 1.0 / full_s})
print(f"teartraces: {full_s*1000:.1f} ms/step, {1.0/full_s:.2f} steps/s, final loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next(iter(make_dataset(5_000_000_000)))
    fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    comp_s, _ = train(fixed)
    frac = min(max((full_s - comp_s) / full_s, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"teartraces truth: compute {comp_s*1000:.1f} ms/step, full {full_s*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
