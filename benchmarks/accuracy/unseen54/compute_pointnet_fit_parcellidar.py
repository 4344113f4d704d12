"""Land-parcel object classification from airborne LiDAR point clouds with PointNet.

Synthetic LiDAR returns for four object kinds (building, tree, vehicle, power
pole) are sampled as fixed-size point sets and normalised in memory before
training.  The in-memory arrays go to model.fit directly; each step is the
PointNet math (shared per-point MLPs, a learned 3x3 input transform and global
max pooling) on 512 points per cloud.
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

N_PTS = 512
N_CLOUDS = 1536
BATCH = 32
EPOCHS = 3
N_CLASSES = 4


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


def make_clouds(rng):
    xs = np.zeros((N_CLOUDS, N_PTS, 3), np.float32)
    ys = np.arange(N_CLOUDS) % N_CLASSES
    for i, c in enumerate(ys):
        u = rng.random((N_PTS, 3))
        if c == 0:  # box building
            p = u * [10, 8, 6]
        elif c == 1:  # tree: trunk + sphere crown
            d = rng.normal(0, 1, (N_PTS, 3)); d /= np.linalg.norm(d, axis=1, keepdims=True)
            p = d * 3 + [0, 0, 8]
            p[: N_PTS // 5] = np.c_[u[: N_PTS // 5, :2] * 0.4, u[: N_PTS // 5, 2] * 6]
        elif c == 2:  # vehicle
            p = u * [4.5, 1.8, 1.5]
        else:  # pole with cross arm
            p = np.c_[u[:, 0] * 0.3, u[:, 1] * 0.3, u[:, 2] * 12]
            p[: N_PTS // 4] = np.c_[u[: N_PTS // 4, 0] * 3 - 1.5, np.zeros(N_PTS // 4), 11 + u[: N_PTS // 4, 2] * 0.3]
        th = rng.uniform(0, 2 * np.pi)
        rot = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
        p = p @ rot.T + rng.normal(0, 0.05, p.shape)
        p -= p.mean(0)
        xs[i] = p / np.abs(p).max()
    return xs, ys.astype(np.int64)


def tnet(x, k):
    t = keras.layers.Conv1D(64, 1, activation="relu")(x)
    t = keras.layers.Conv1D(128, 1, activation="relu")(t)
    t = keras.layers.Conv1D(256, 1, activation="relu")(t)
    t = keras.layers.GlobalMaxPooling1D()(t)
    t = keras.layers.Dense(128, activation="relu")(t)
    t = keras.layers.Dense(k * k, kernel_initializer="zeros",
                           bias_initializer=keras.initializers.Constant(np.eye(k).flatten()))(t)
    t = keras.layers.Reshape((k, k))(t)
    return keras.layers.Dot(axes=(2, 1))([x, t])


def build_model():
    inp = keras.Input((N_PTS, 3))
    x = tnet(inp, 3)
    x = keras.layers.Conv1D(64, 1, activation="relu")(x)
    x = keras.layers.Conv1D(64, 1, activation="relu")(x)
    x = keras.layers.Conv1D(128, 1, activation="relu")(x)
    x = keras.layers.Conv1D(384, 1, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dropout(0.3)(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(data, **kw):
    keras.utils.set_random_seed(13)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step()


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_compute_pointnet_fit_parcellidar_")
    try:
        xs, ys = make_clouds(np.random.default_rng(54))
        steps = N_CLOUDS // BATCH
        full = train(xs, y=ys, batch_size=BATCH, shuffle=True)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step"
        if "--truth" in sys.argv:
            batch = (xs[:BATCH], ys[:BATCH])
            comp = train(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=steps)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"compute_pointnet_fit_parcellidar: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
