import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Retail shelf photos: JPEG files found with list_files, read_file + decode_jpeg,
# then heavy resizing and colour augmentation in a map with num_parallel_calls=2.
BATCH, STEPS, EPOCHS, N_IMG, SIDE = 32, 40, 3, 400, 320


def write_jpegs(folder, rng):
    from PIL import Image
    for i in range(N_IMG):
        cls = i % 4
        base = rng.integers(0, 255, size=(SIDE // 8, SIDE // 8, 3), dtype=np.uint8)
        base[..., cls % 3] = np.clip(base[..., cls % 3].astype(int) + 60, 0, 255)
        img = Image.fromarray(base).resize((SIDE, SIDE), Image.BILINEAR)
        img.save(os.path.join(folder, f"shelf_{i:05d}_c{cls}.jpg"), quality=90)


def load(path):
    raw = tf.io.read_file(path)
    img = tf.io.decode_jpeg(raw, channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.resize(img, (288, 288), method="bicubic")
    img = tf.image.random_crop(img, (256, 256, 3))
    img = tf.image.random_hue(img, 0.08)
    img = tf.image.random_saturation(img, 0.7, 1.3)
    img = tf.image.random_contrast(img, 0.8, 1.2)
    img = tf.image.adjust_gamma(img, 1.1)
    img = tf.image.resize(img, (96, 96), method="lanczos3")
    fname = tf.strings.split(path, "_c")[-1]
    label = tf.strings.to_number(tf.strings.substr(fname, 0, 1), tf.int32)
    return img, label


def build_model():
    inp = keras.Input((96, 96, 3))
    h = keras.layers.Conv2D(32, 3, strides=2, activation="relu")(inp)
    h = keras.layers.Conv2D(64, 3, strides=2, activation="relu")(h)
    h = keras.layers.Conv2D(64, 3, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    m = keras.Model(inp, keras.layers.Dense(4)(h))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u32_input_decodejpeg_colorjitter_shelves_")
    try:
        write_jpegs(tmp, np.random.default_rng(32))
        ds = (tf.data.Dataset.list_files(os.path.join(tmp, "*.jpg"), shuffle=True, seed=3).repeat()
              .map(load, num_parallel_calls=2).batch(BATCH).prefetch(2))
        t0 = time.perf_counter()
        timer = StepTimer()
        build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = f"full {full*1000:.1f} ms/step"
        if args.truth:
            batch = next(iter(ds))
            timer2 = StepTimer()
            build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                              epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.sec_per_step()
            f = truth_fraction(full, comp)
            emit("truth_input_fraction", f)
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
        print(f"input_decodejpeg_colorjitter_shelves: {msg}, wall {time.perf_counter()-t0:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
