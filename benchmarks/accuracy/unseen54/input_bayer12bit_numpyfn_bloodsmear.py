"""Blood-smear cell classification straight from 12-bit packed Bayer sensor dumps.

The microscope camera writes each field of view as a raw RGGB mosaic with two
12-bit pixels packed into three bytes (.raw files, one per capture).  A tf.data
pipeline lists the files and, in a serial map through tf.numpy_function, unpacks
the 12-bit words, subtracts the black level, bilinearly demosaics, white-balances
and gamma-corrects each frame before model.fit sees it.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

H = W = 128
N_FILES = 400
N_CLASSES = 4
BATCH = 32
STEPS = 60
EPOCHS = 2
BLACK = 64


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def pack12(mosaic):
    m = mosaic.reshape(-1, 2).astype(np.uint16)
    b0 = (m[:, 0] >> 4).astype(np.uint8)
    b1 = (((m[:, 0] & 0xF) << 4) | (m[:, 1] >> 8)).astype(np.uint8)
    b2 = (m[:, 1] & 0xFF).astype(np.uint8)
    return np.stack([b0, b1, b2], 1).tobytes()


def write_captures(tmp, rng):
    yy, xx = np.mgrid[0:H, 0:W]
    for i in range(N_FILES):
        label = i % N_CLASSES
        rgb = np.full((H, W, 3), [0.85, 0.75, 0.8]) + rng.normal(0, 0.02, (H, W, 3))
        for _ in range(6 + 3 * label):
            cy, cx, r = rng.integers(10, H - 10), rng.integers(10, W - 10), rng.integers(5, 9 + label)
            disk = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
            rgb[disk] = [0.7 - 0.1 * label, 0.3, 0.45 + 0.08 * label]
        lin = np.clip(rgb, 0, 1) ** 2.2 * 3800 + BLACK
        mosaic = np.empty((H, W), np.float64)
        mosaic[0::2, 0::2] = lin[0::2, 0::2, 0] * 0.55
        mosaic[0::2, 1::2] = lin[0::2, 1::2, 1]
        mosaic[1::2, 0::2] = lin[1::2, 0::2, 1]
        mosaic[1::2, 1::2] = lin[1::2, 1::2, 2] * 0.7
        mosaic = np.clip(mosaic + rng.normal(0, 8, mosaic.shape), 0, 4095).astype(np.uint16)
        with open(os.path.join(tmp, f"fov_{i:05d}_c{label}.raw"), "wb") as fh:
            fh.write(pack12(mosaic))


def unpack12(buf):
    b = np.frombuffer(buf, np.uint8).reshape(-1, 3).astype(np.uint16)
    p0 = (b[:, 0] << 4) | (b[:, 1] >> 4)
    p1 = ((b[:, 1] & 0xF) << 8) | b[:, 2]
    return np.stack([p0, p1], 1).reshape(H, W)


def conv3(a, k):
    p = np.pad(a, 1, mode="reflect")
    out = np.zeros_like(a)
    for dy in range(3):
        for dx in range(3):
            out += k[dy, dx] * p[dy:dy + H, dx:dx + W]
    return out


K_RB = np.array([[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]])
K_G = np.array([[0.0, 0.25, 0.0], [0.25, 1.0, 0.25], [0.0, 0.25, 0.0]])


def develop(path):
    with open(path.decode(), "rb") as fh:
        raw = unpack12(fh.read()).astype(np.float32)
    raw = np.clip(raw - BLACK, 0, None) / (4095 - BLACK)
    r = np.zeros_like(raw); g = np.zeros_like(raw); b = np.zeros_like(raw)
    r[0::2, 0::2] = raw[0::2, 0::2]
    g[0::2, 1::2] = raw[0::2, 1::2]; g[1::2, 0::2] = raw[1::2, 0::2]
    b[1::2, 1::2] = raw[1::2, 1::2]
    rgb = np.stack([conv3(r, K_RB), conv3(g, K_G), conv3(b, K_RB)], -1)
    gray = rgb.reshape(-1, 3).mean(0)
    rgb = rgb * (gray.mean() / (gray + 1e-6))
    rgb = np.clip(rgb, 0, 1) ** (1 / 2.2)
    label = int(path.decode().rsplit("_c", 1)[1][0])
    return rgb.astype(np.float32), np.int64(label)


def load(path):
    x, y = tf.numpy_function(develop, [path], [tf.float32, tf.int64])
    x.set_shape((H, W, 3)); y.set_shape(())
    return x, y


def build_model():
    inp = keras.Input((H, W, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(5)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_input_bayer12bit_numpyfn_bloodsmear_")
    try:
        write_captures(tmp, np.random.default_rng(54))
        ds = (tf.data.Dataset.list_files(os.path.join(tmp, "*.raw"), shuffle=True, seed=2)
              .repeat().map(load).batch(BATCH).prefetch(2))
        full = train(ds)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step"
        if "--truth" in sys.argv:
            xb, yb = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_bayer12bit_numpyfn_bloodsmear: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
