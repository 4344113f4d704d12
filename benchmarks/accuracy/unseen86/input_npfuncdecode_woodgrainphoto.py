import time; T0 = time.perf_counter()
"""Wood-grain photo grader (FAS / Select / No.1 Common / No.2 Common).

Board-face photos are stored as compact procedural descriptors (ring spacing,
knot positions, figure strength).  A tf.data pipeline maps each descriptor
through tf.numpy_function (serial map, no num_parallel_calls) that renders the
64x64 grayscale grain photo with knots and medullary rays, normalises it and
returns it; the batches feed model.fit.
Bottleneck: the serial NumPy rendering inside tf.numpy_function (input-bound).
"""
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

SIZE = 64
N_BOARDS = 4000
BATCH = 32
STEPS = 100
EPOCHS = 3
GRADES = 4
MAX_KNOTS = 6


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

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


def make_descriptors(seed=86):
    rng = np.random.default_rng(seed)
    grade = rng.integers(0, GRADES, N_BOARDS)
    desc = np.zeros((N_BOARDS, 4 + 3 * MAX_KNOTS), np.float32)
    desc[:, 0] = rng.uniform(2.0, 6.0, N_BOARDS)            # ring spacing (px)
    desc[:, 1] = rng.uniform(-0.4, 0.4, N_BOARDS)           # grain slope
    desc[:, 2] = rng.uniform(0.0, 1.0, N_BOARDS)            # ray figure strength
    desc[:, 3] = rng.integers(0, 1 << 30, N_BOARDS)         # noise seed
    for i in range(N_BOARDS):
        k = min(MAX_KNOTS, int(grade[i]) * 2)
        for j in range(k):
            desc[i, 4 + 3 * j:7 + 3 * j] = [rng.uniform(5, 59), rng.uniform(5, 59), rng.uniform(2, 6)]
    return desc, grade.astype(np.int32)


def render_board(d):
    rng = np.random.default_rng(int(d[3]))
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    warp = np.zeros((SIZE, SIZE), np.float32)
    for j in range(MAX_KNOTS):
        ky, kx, kr = d[4 + 3 * j:7 + 3 * j]
        if kr > 0:
            dist2 = (yy - ky) ** 2 + (xx - kx) ** 2
            warp += 8.0 * kr * np.exp(-dist2 / (2 * (3 * kr) ** 2))
    noise = rng.normal(0, 1, (SIZE, SIZE)).astype(np.float32)
    for _ in range(SMOOTH):
        noise = 0.25 * (np.roll(noise, 1, 0) + np.roll(noise, -1, 0) + np.roll(noise, 1, 1) + noise)
    phase = (xx + d[1] * yy + warp + 2.0 * noise) / d[0]
    img = 0.5 + 0.35 * np.sin(2 * np.pi * phase)
    rays = d[2] * 0.15 * (np.sin(yy * 1.7 + noise) > 0.9)
    img = img + rays
    for j in range(MAX_KNOTS):
        ky, kx, kr = d[4 + 3 * j:7 + 3 * j]
        if kr > 0:
            img -= 0.6 * np.exp(-((yy - ky) ** 2 + (xx - kx) ** 2) / (2 * kr * kr))
    img = (img - img.mean()) / (img.std() + 1e-6)
    return img[..., None].astype(np.float32)


SMOOTH = 35


def decode(d, g):
    img = tf.numpy_function(render_board, [d], tf.float32)
    img.set_shape((SIZE, SIZE, 1))
    return img, g


def make_dataset():
    desc, grade = make_descriptors()
    ds = tf.data.Dataset.from_tensor_slices((desc, grade)).shuffle(N_BOARDS, seed=86).repeat()
    return ds.map(decode).batch(BATCH)


def build_model():
    inp = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(GRADES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(86)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    full = train(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    msg = f"[woodgrain] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = next(iter(make_dataset()))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
