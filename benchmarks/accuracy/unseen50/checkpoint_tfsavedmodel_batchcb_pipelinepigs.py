"""Defect-type classification for in-line inspection ("pigging") of oil pipelines.
Magnetic-flux-leakage patches (circumferential x axial, 3 sensor channels) are synthesised into
in-memory numpy arrays and trained with model.fit. Because the inspection vendor's field boxes
load TensorFlow SavedModels, a batch-end callback writes a full tf.saved_model.save export
(with a serving signature) every few batches so that the latest model can always be shipped.
"""
import json
import os
import shutil
import sys
import tempfile
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N = 2048
H, W, C = 32, 64, 3
BATCH = 64
EPOCHS = 2
SAVE_EVERY = 1


class TimedSavedModelExport(keras.callbacks.Callback):
    """Records step end times and exports a SavedModel every SAVE_EVERY batches.
    The step stamp is taken before the export and the next step's reference after it,
    so the export time stays outside the timed gaps."""

    def __init__(self, root):
        super().__init__()
        self.root = root
        self.gaps = []
        self._ref = None
        self.save_seconds = 0.0
        self.n_saves = 0
        self.global_batch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._ref = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._ref is not None:
            self.gaps.append(now - self._ref)
        self.global_batch += 1
        if self.global_batch % SAVE_EVERY == 0:
            model = self.model

            @tf.function(input_signature=[tf.TensorSpec([None, H, W, C], tf.float32)])
            def serve(x):
                return {"defect_logits": model(x, training=False)}

            path = os.path.join(self.root, f"export_{self.global_batch:05d}")
            tf.saved_model.save(model, path, signatures={"serving_default": serve})
            self.n_saves += 1
        self._ref = time.perf_counter()
        self.save_seconds += self._ref - now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_patches(rng):
    y = rng.integers(0, 4, N).astype(np.int32)   # none, pitting, crack-like, dent
    yy, xx = np.mgrid[0:H, 0:W]
    x = 0.2 * rng.standard_normal((N, H, W, C)).astype(np.float32)
    for i in range(N):
        cy, cx = rng.integers(6, H - 6), rng.integers(8, W - 8)
        if y[i] == 1:
            x[i] += (np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6.0))[..., None]
        elif y[i] == 2:
            x[i] += (np.exp(-((yy - cy) ** 2) / 1.0) * (np.abs(xx - cx) < 12))[..., None] * 0.8
        elif y[i] == 3:
            x[i] += (np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 40.0))[..., None] * np.array([0.8, -0.4, 0.3])
    return x, y


def make_model():
    inp = keras.Input((H, W, C))
    x = inp
    for f in (16, 32, 48):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_checkpoint_tfsavedmodel_batchcb_pipelinepigs_")
    try:
        x, y = make_patches(np.random.default_rng(SEED))
        steps = int(np.ceil(N / BATCH))
        model = make_model()
        cb = TimedSavedModelExport(os.path.join(tmp, "run1"))
        hist = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[cb], verbose=0)
        full = cb.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T0
        msg = (f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f} saves={cb.n_saves} "
               f"save_s={cb.save_seconds:.1f} wall_so_far={wall:.1f} save_share={cb.save_seconds / wall:.2f}")
        if truth:
            one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            cb2 = TimedSavedModelExport(os.path.join(tmp, "run2"))
            make_model().fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[cb2], verbose=0)
            comp = cb2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"checkpoint_tfsavedmodel_batchcb_pipelinepigs: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
