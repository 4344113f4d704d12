"""Roadside LiDAR object classification: each scanned object is a raw point cloud of
a few thousand (x, y, z, intensity) returns, kept as one .npy file per object. Before
every step the loader reads the clouds, downsamples each to a fixed size with farthest
point sampling in numpy, applies a random yaw rotation and jitter, and calls
model.train_on_batch on a small PointNet.
"""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
N_OBJ = 400
RAW_PTS = 768
N_PTS = 128
N_CLASSES = 5
BATCH = 16
STEPS = 260


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def synth_object(rng, label):
    n = RAW_PTS
    if label == 0:    # car: box
        p = rng.uniform([-2, -0.9, 0], [2, 0.9, 1.5], (n, 3))
    elif label == 1:  # pedestrian: thin cylinder
        a, r = rng.uniform(0, 2 * np.pi, n), rng.uniform(0, 0.3, n)
        p = np.c_[r * np.cos(a), r * np.sin(a), rng.uniform(0, 1.8, n)]
    elif label == 2:  # pole
        a = rng.uniform(0, 2 * np.pi, n)
        p = np.c_[0.1 * np.cos(a), 0.1 * np.sin(a), rng.uniform(0, 5, n)]
    elif label == 3:  # bush: sphere
        v = rng.normal(size=(n, 3))
        p = v / np.linalg.norm(v, axis=1, keepdims=True) * rng.uniform(0.5, 1.0, (n, 1))
    else:             # cyclist: flattened box
        p = rng.uniform([-0.9, -0.2, 0], [0.9, 0.2, 1.7], (n, 3))
    inten = rng.uniform(0, 1, (n, 1))
    return np.c_[p + rng.normal(0, 0.02, (n, 3)), inten].astype(np.float32)


def write_scans(root):
    rng = np.random.default_rng(SEED)
    paths, labels = [], []
    for i in range(N_OBJ):
        label = int(rng.integers(0, N_CLASSES))
        p = os.path.join(root, f"obj_{i:04d}.npy")
        np.save(p, synth_object(rng, label))
        paths.append(p)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


def farthest_point_sample(pts, k, rng):
    xyz = pts[:, :3]
    chosen = np.empty(k, dtype=np.int64)
    chosen[0] = rng.integers(len(xyz))
    dist = np.full(len(xyz), np.inf)
    for j in range(1, k):
        d = np.sum((xyz - xyz[chosen[j - 1]]) ** 2, axis=1)
        np.minimum(dist, d, out=dist)
        chosen[j] = int(np.argmax(dist))
    return pts[chosen]


def load_batch(paths, labels, rng):
    sel = rng.integers(0, len(paths), BATCH)
    out = []
    for i in sel:
        pts = farthest_point_sample(np.load(paths[i]), N_PTS, rng)
        th = rng.uniform(0, 2 * np.pi)
        rot = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]], np.float32)
        xyz = pts[:, :3] @ rot.T + rng.normal(0, 0.01, (N_PTS, 3))
        xyz -= xyz.mean(0)
        out.append(np.c_[xyz, pts[:, 3:]])
    return np.stack(out).astype(np.float32), labels[sel]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_PTS, 4))
    x = inp
    for f in (64, 128, 256, 1024):
        x = keras.layers.Conv1D(f, 1, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(batch_fn):
    model = build_model()
    times, res = [], None
    for _ in range(STEPS):
        xb, yb = batch_fn()
        res = model.train_on_batch(xb, yb, return_dict=True)
        loss = float(res["loss"])
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), res


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u40_input_fps_trainonbatch_lidar_")
    try:
        paths, labels = write_scans(tmp)
        rng = np.random.default_rng(SEED)
        full, res = run(lambda: load_batch(paths, labels, rng))
        append_out({"steps_per_second": 1.0 / full})
        msg = f"lidar FPS PointNet: {full*1000:.1f} ms/step, acc {float(res['accuracy']):.3f}"
        if truth:
            fixed = load_batch(paths, labels, np.random.default_rng(SEED + 1))
            comp, _ = run(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append_out({"truth_input_fraction": frac})
            msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
