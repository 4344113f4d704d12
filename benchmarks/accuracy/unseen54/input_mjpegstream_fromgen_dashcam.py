"""Dashcam harsh-braking detection from an MJPEG video stream.

Synthetic road-scene frames are JPEG-encoded and concatenated into a single
.mjpeg file, the way cheap dashcams record.  Every training sample re-scans the
stream for SOI/EOI markers, decodes a short clip of frames with PIL, converts
to grayscale and stacks the frames with their temporal differences; the clips
reach model.fit through tf.data.Dataset.from_generator.
"""
import io
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

H = W = 112
CLIP = 5
N_FRAMES = 600
BATCH = 32
STEPS = 70
EPOCHS = 2


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


def render_stream(path, rng):
    """Write N_FRAMES JPEG frames back to back; speed profile drives lane motion."""
    speed = np.clip(np.cumsum(rng.normal(0, 0.6, N_FRAMES)) % 9 + 1, 1, 9)
    brake = np.zeros(N_FRAMES, dtype=np.int64)
    for s in rng.choice(N_FRAMES - 20, 25, replace=False):
        speed[s:s + 12] = np.linspace(speed[s], 0.5, 12)
        brake[s:s + 12] = 1
    offset = np.cumsum(speed)
    with open(path, "wb") as fh:
        for i in range(N_FRAMES):
            img = Image.new("RGB", (W, H), (90, 120, 160))
            d = ImageDraw.Draw(img)
            d.polygon([(0, H), (W, H), (W // 2 + 8, H // 3), (W // 2 - 8, H // 3)], fill=(60, 60, 60))
            for k in range(6):
                y = (H // 3 + (offset[i] * 2 + k * 18) % (2 * H // 3))
                d.rectangle([W // 2 - 2, y, W // 2 + 2, y + 6], fill=(230, 230, 210))
            arr = np.asarray(img, dtype=np.int16) + rng.integers(-12, 12, (H, W, 3))
            buf = io.BytesIO()
            Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=85)
            fh.write(buf.getvalue())
    return brake


def index_frames(blob):
    """Find (start, end) byte spans of each JPEG by scanning SOI/EOI markers."""
    spans, pos = [], 0
    while True:
        s = blob.find(b"\xff\xd8\xff", pos)
        if s < 0:
            break
        e = blob.find(b"\xff\xd9", s + 2)
        spans.append((s, e + 2))
        pos = e + 2
    return spans


def clip_generator(path, labels, seed):
    rng = np.random.default_rng(seed)
    while True:
        with open(path, "rb") as fh:
            blob = fh.read()
        spans = index_frames(blob)
        for _ in range(BATCH * 4):
            start = int(rng.integers(0, len(spans) - CLIP))
            frames = []
            for s, e in spans[start:start + CLIP]:
                g = Image.open(io.BytesIO(blob[s:e])).convert("L")
                frames.append(np.asarray(g, dtype=np.float32) / 255.0)
            frames = np.stack(frames, -1)
            diffs = np.diff(frames, axis=-1)
            x = np.concatenate([frames, diffs], -1)
            x = (x - x.mean()) / (x.std() + 1e-6)
            yield x.astype(np.float32), np.int64(labels[start + CLIP - 1])


def build_model():
    inp = keras.Input((H, W, 2 * CLIP - 1))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(2)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(7)
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
    tmp = tempfile.mkdtemp(prefix="u54_input_mjpegstream_fromgen_dashcam_")
    try:
        rng = np.random.default_rng(54)
        path = os.path.join(tmp, "drive_0001.mjpeg")
        labels = render_stream(path, rng)
        sig = (tf.TensorSpec((H, W, 2 * CLIP - 1), tf.float32), tf.TensorSpec((), tf.int64))
        ds = (tf.data.Dataset.from_generator(lambda: clip_generator(path, labels, 1), output_signature=sig)
              .batch(BATCH).prefetch(2))
        full = train(ds)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step"
        if "--truth" in sys.argv:
            xb, yb = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_mjpegstream_fromgen_dashcam: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
