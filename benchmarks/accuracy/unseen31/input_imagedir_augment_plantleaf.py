"""Plant-leaf disease classifier: PNG folder -> image_dataset_from_directory -> augmentation layers in map."""
import argparse, json, os, shutil, sys, tempfile, time
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records time between consecutive training batches within each epoch."""
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")
from PIL import Image

BATCH, STEPS, EPOCHS, SIZE = 32, 55, 2, 128


def write_pngs(root, n_per_class=160, classes=("healthy", "rust", "blight")):
    rng = np.random.default_rng(0)
    for c in classes:
        os.makedirs(os.path.join(root, c))
        for i in range(n_per_class):
            arr = rng.integers(0, 255, (160, 160, 3), dtype=np.uint8)
            Image.fromarray(arr).save(os.path.join(root, c, f"leaf_{i:04d}.png"))


def build_model():
    m = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Rescaling(1 / 255.0),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3),
    ])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u31_input_imagedir_augment_plantleaf_")
    try:
        write_pngs(tmp)
        ds = keras.utils.image_dataset_from_directory(tmp, image_size=(160, 160), batch_size=BATCH, shuffle=True, seed=1)
        aug = keras.Sequential([keras.layers.RandomFlip("horizontal_and_vertical"), keras.layers.RandomRotation(0.2),
                                keras.layers.RandomZoom(0.2), keras.layers.RandomContrast(0.3),
                                keras.layers.RandomCrop(SIZE, SIZE)])
        ds = ds.map(lambda x, y: (aug(x, training=True), y)).repeat()
        t0 = time.perf_counter()
        timer = StepTimer(); build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step(); report("steps_per_second", 1.0 / full)
        msg = f"plantleaf: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
        if a.truth:
            batch = next(iter(ds))
            t2 = StepTimer(); build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step(); F = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
