"""Nitrate film archive: frame damage classifier from run-length-encoded scans.

Data path: the film scanner writes frames as run-length-encoded text
("value*count,value*count,...") grouped into reel shards.  A tf.data
pipeline interleaves the reels (Dataset.range(reels).interleave over
per-reel from_generator datasets); each reel generator parses the edge-code
header and expands the RLE runs in Python, then batches feed model.fit.
Deliberate bottleneck: Python RLE decoding inside the interleaved
generators (input-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


BATCH = 32
STEPS = 30
EPOCHS = 3
H, W = 48, 64
NCLASS = 5
REELS = 8
FRAMES_PER_REEL = 40


def rle_encode(flat):
    out = []
    flat = flat.tolist()
    prev, count = flat[0], 0
    for v in flat:
        if v == prev:
            count += 1
        else:
            out.append(f"{prev}*{count}")
            prev, count = v, 1
    out.append(f"{prev}*{count}")
    return ",".join(out)


def make_reels(seed):
    rng = np.random.default_rng(seed)
    reels = []
    for r in range(REELS):
        frames = []
        for f in range(FRAMES_PER_REEL):
            cls = int(rng.integers(NCLASS))
            img = np.full((H, W), 140, np.int32)
            img[:, : 4 + cls] = 20  # damage band width grows with class
            for _ in range(cls * 3):
                y, x = rng.integers(0, H), rng.integers(0, W - 8)
                img[y, x:x + 8] = 250  # scratches
            img = (img // 16) * 16 + (rng.random((H, W)) < 0.15) * 16  # quantised scan
            frames.append((f"KODAK 5247 EDGE {r:02d}{f:04d} CLS {cls}", rle_encode(img.ravel())))
        reels.append(frames)
    return reels


REELS_DATA = make_reels(76)


def decode_frame(header, rle):
    cls = int(header.split()[-1])
    vals = []
    for run in rle.split(","):
        v, c = run.split("*")
        vals.extend([int(v)] * int(c))
    img = np.array(vals, np.float32).reshape(H, W) / 255.0
    return img[..., None], cls


def reel_generator(reel):
    frames = REELS_DATA[int(reel)]
    rng = np.random.default_rng(int(reel))
    while True:
        for i in rng.permutation(len(frames)):
            yield decode_frame(*frames[i])


def make_dataset():
    sig = (tf.TensorSpec((H, W, 1), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.range(REELS).interleave(
        lambda r: tf.data.Dataset.from_generator(reel_generator, output_signature=sig, args=(r,)),
        cycle_length=4, block_length=2)
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((H, W, 1))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(ds):
    keras.utils.set_random_seed(76)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = run(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"filmarchive: {1.0/full:.2f} steps/s ({full*1000:.1f} ms/step), "
          f"wall {time.perf_counter()-WALL0:.1f}s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        compute = run(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        report_truth(full, compute)


if __name__ == "__main__":
    main()
