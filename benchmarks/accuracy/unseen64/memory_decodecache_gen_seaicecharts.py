import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

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

# Sea-ice concentration charts (run-length-encoded 128x128 grids of concentration
# tenths, SIGRID-like). A Python generator decodes each chart and, "for later QA plots",
# stores the decoded chart upsampled to 384x384 float64 plus its raw bytes in a
# module-level provenance cache keyed by (pass, chart) that is never evicted. The
# dataset repeats, so the cache grows for the whole of training. model.fit trains a
# small CNN that predicts the ice-edge class. Bottleneck: unbounded memory growth.
import resource
BATCH = 32
STEPS = 20
EPOCHS = 2
G = 128
N_CHARTS = 400
rng0 = np.random.default_rng(64012)
PROVENANCE = {}


def make_chart(i, rng):
    yy, xx = np.mgrid[0:G, 0:G] / float(G)
    edge = rng.uniform(0.2, 0.8) + 0.1 * np.sin(xx * rng.uniform(3, 12))
    conc = np.clip(np.round((yy - edge) * 30 + rng.normal(0, 0.5, (G, G))), 0, 10).astype(np.uint8).ravel()
    change = np.flatnonzero(np.diff(conc)) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [conc.size]]))
    rle = np.stack([conc[starts], lengths], 1).astype(np.uint16).tobytes()
    return rle, int(edge.mean() * 4)


CHARTS = [make_chart(i, rng0) for i in range(N_CHARTS)]


def decode(rle):
    pairs = np.frombuffer(rle, np.uint16).reshape(-1, 2)
    grid = np.repeat(pairs[:, 0], pairs[:, 1]).reshape(G, G).astype(np.float64) / 10.0
    return grid


def gen():
    rng = np.random.default_rng(8)
    p = 0
    while True:
        for idx in rng.permutation(N_CHARTS):
            rle, label = CHARTS[idx]
            grid = decode(rle)
            PROVENANCE[(p, int(idx))] = (np.repeat(np.repeat(grid, 3, 0), 3, 1), bytes(rle))  # never evicted
            x = grid[::2, ::2, None].astype(np.float32) + rng.normal(0, 0.02, (G // 2, G // 2, 1)).astype(np.float32)
            yield x, np.int32(label)
        p += 1


class RssLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("  epoch %d: peak RSS %.2f GiB, provenance cache %d charts"
              % (epoch, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, len(PROVENANCE)))


def make_ds():
    ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec((G // 2, G // 2, 1), tf.float32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((G // 2, G // 2, 1)), keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, RssLog()], verbose=0)
    return sec_per_step(timer.gaps)


full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print("seaicecharts fromgen fit with growing cache: %.4f s/step, %.2f steps/s, peak RSS %.2f GiB, wall %.1f s"
      % (full, 1.0 / full, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, time.perf_counter() - WALL0))
if TRUTH:
    batch = next(iter(make_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
