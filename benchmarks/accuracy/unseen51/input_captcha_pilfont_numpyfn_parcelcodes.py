"""Reading handwritten-style parcel routing codes: every training image is rendered on
the fly from a random 5-digit code with PIL ImageFont/ImageDraw, jittered, rotated and
speckled, inside a tf.numpy_function in a serial tf.data map; batches feed model.fit of
a small CNN with one softmax per digit position.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
import tensorflow as tf
import keras

BATCH = 32
STEPS = 100
EPOCHS = 2
H, W = 48, 128
DIGITS = 5


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


FONT = ImageFont.load_default()


def render(seed):
    rng = np.random.default_rng(int(seed))
    code = rng.integers(0, 10, DIGITS)
    img = Image.new("L", (W * 2, H * 2), color=int(rng.integers(200, 255)))
    d = ImageDraw.Draw(img)
    x = 8
    for c in code:
        glyph = Image.new("L", (24, 30), 0)
        ImageDraw.Draw(glyph).text((4, 6), str(c), fill=255, font=FONT)
        glyph = glyph.resize((40, 50)).rotate(float(rng.uniform(-25, 25)), resample=Image.BILINEAR)
        img.paste(int(rng.integers(0, 90)), (x, int(rng.integers(10, 40))), glyph)
        x += int(rng.integers(38, 50))
    for _ in range(6):
        d.line([tuple(rng.integers(0, 2 * W, 2)), tuple(rng.integers(0, 2 * H, 2))],
               fill=int(rng.integers(60, 160)), width=int(rng.integers(1, 3)))
    img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.2))))
    img = img.transform(img.size, Image.AFFINE, (1, float(rng.uniform(-0.2, 0.2)), 0, 0, 1, 0),
                        resample=Image.BILINEAR)
    img = img.resize((W, H), Image.BILINEAR)
    arr = np.asarray(img, np.float32) / 255.0
    arr += rng.normal(0, 0.05, arr.shape).astype(np.float32)
    return arr[..., None].astype(np.float32), code.astype(np.int32)


def tf_render(seed):
    x, y = tf.numpy_function(render, [seed], [tf.float32, tf.int32])
    x.set_shape((H, W, 1)); y.set_shape((DIGITS,))
    return x, y


def build_model():
    inp = keras.Input((H, W, 1))
    x = inp
    for f in (16, 32, 48):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(DIGITS * 10)(x)
    out = keras.layers.Reshape((DIGITS, 10))(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_captcha_pilfont_numpyfn_parcelcodes_")
    try:
        ds = (tf.data.Dataset.range(10_000_000).map(tf_render).batch(BATCH))
        tf.random.set_seed(51)
        model = build_model()
        timer = StepTimer()
        t0 = time.perf_counter()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})

        if "--truth" in sys.argv:
            xb, yb = next(iter(ds.take(1)))
            tf.random.set_seed(51)
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        model.save(os.path.join(tmp, "parcel_reader.keras"))
        print(f"parcel code reader: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, "
              f"final acc {hist.history['accuracy'][-1]:.3f}, fit {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
