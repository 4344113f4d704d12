"""Hand-gesture recognition from short webcam clips that a labelling tool saved as
animated GIFs (one palette-encoded GIF per clip). A tf.data pipeline built with
from_generator opens each GIF with PIL, walks its frames with ImageSequence,
converts them to grayscale, adds frame-difference motion channels and feeds model.fit.
"""
import os, sys, json, time, random, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from PIL import Image, ImageDraw, ImageSequence
import tensorflow as tf
import keras

SEED = 40
SIZE = 64
FRAMES = 12
N_CLIPS = 160
N_CLASSES = 4
BATCH = 16
STEPS = 60
EPOCHS = 5


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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def write_clips(root):
    """Render a blob 'hand' moving left/right/up/down over a noisy background."""
    rng = np.random.default_rng(SEED)
    dirs = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    paths, labels = [], []
    for i in range(N_CLIPS):
        label = int(rng.integers(0, N_CLASSES))
        dx, dy = dirs[label]
        x0, y0 = rng.uniform(20, 44, 2)
        bg = rng.integers(40, 90, (SIZE, SIZE), dtype=np.uint8)
        frames = []
        for t in range(FRAMES):
            im = Image.fromarray(bg).convert("RGB")
            d = ImageDraw.Draw(im)
            cx, cy = x0 + dx * 2.0 * (t - FRAMES / 2), y0 + dy * 2.0 * (t - FRAMES / 2)
            r = 7 + rng.uniform(-1, 1)
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(220, 180, 150))
            frames.append(im.convert("P", palette=Image.ADAPTIVE, colors=64))
        p = os.path.join(root, f"clip_{i:04d}.gif")
        frames[0].save(p, save_all=True, append_images=frames[1:], duration=66, loop=0)
        paths.append(p)
        labels.append(label)
    return paths, labels


def load_clip(path, flip):
    with Image.open(path) as gif:
        frames = [np.asarray(f.convert("L"), dtype=np.float32) / 255.0
                  for f in ImageSequence.Iterator(gif)]
    clip = np.stack(frames[:FRAMES])
    if flip:
        clip = clip[:, :, ::-1]
    motion = np.concatenate([np.zeros_like(clip[:1]), np.diff(clip, axis=0)], axis=0)
    return np.stack([clip, motion], axis=-1)


def make_dataset(paths, labels, seed):
    def gen():
        rnd = random.Random(seed)
        idx = list(range(len(paths)))
        while True:
            rnd.shuffle(idx)
            for i in idx:
                flip = rnd.random() < 0.5
                y = labels[i]
                if flip and y in (0, 1):
                    y = 1 - y
                yield load_clip(paths[i], flip), y

    sig = (tf.TensorSpec((FRAMES, SIZE, SIZE, 2), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FRAMES, SIZE, SIZE, 2))
    x = keras.layers.TimeDistributed(keras.layers.Conv2D(16, 5, strides=4, activation="relu"))(inp)
    x = keras.layers.TimeDistributed(keras.layers.Conv2D(32, 3, strides=2, activation="relu"))(x)
    x = keras.layers.TimeDistributed(keras.layers.GlobalAveragePooling2D())(x)
    x = keras.layers.GRU(32)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds, timer):
    model = build_model()
    return model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0).history


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_input_gifframes_fromgen_gesture_")
    try:
        paths, labels = write_clips(tmp)
        timer = StepTimer()
        hist = train(make_dataset(paths, labels, SEED), timer)
        full = timer.seconds_per_step()
        append_out({"steps_per_second": 1.0 / full})
        msg = f"gif gestures: {full*1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
        if truth:
            batch = next(iter(make_dataset(paths, labels, SEED + 1)))
            ctimer = StepTimer()
            train(tf.data.Dataset.from_tensors(batch).repeat(), ctimer)
            comp = ctimer.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
