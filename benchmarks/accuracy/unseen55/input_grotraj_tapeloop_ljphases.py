"""Molecular dynamics: classify the thermodynamic phase (solid / liquid / gas) of
Lennard-Jones particle snapshots.

Snapshots are written as a GROMACS .gro trajectory (fixed-width text: title,
atom count, one line per atom, box vector). The training loop reads frames
from the text file line by line, slices the fixed-width coordinate columns,
computes a minimum-image radial distribution function and a coordination
histogram in numpy, and feeds them to a @tf.function GradientTape step.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N_ATOMS = 128
N_FRAMES = 300
RDF_BINS = 150
BATCH = 32
STEPS = 40
EPOCHS = 3


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_frame(phase, rng):
    if phase == 0:  # fcc-ish solid with thermal noise
        n = int(np.ceil((N_ATOMS / 4) ** (1 / 3)))
        a = 1.55
        base = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
        cells = np.array([[i, j, k] for i in range(n) for j in range(n) for k in range(n)])
        pos = ((cells[:, None, :] + base[None]) .reshape(-1, 3)[:N_ATOMS]) * a
        box = n * a
        pos = pos + rng.normal(0, 0.06, pos.shape)
    else:
        rho = 0.8 if phase == 1 else 0.1
        box = (N_ATOMS / rho) ** (1 / 3)
        pos = rng.uniform(0, box, (N_ATOMS, 3))
        if phase == 1:  # crude soft-sphere relaxation to get a liquid-like structure
            for _ in range(8):
                d = pos[:, None] - pos[None]
                d -= box * np.round(d / box)
                r2 = (d ** 2).sum(-1) + np.eye(N_ATOMS)
                push = (d / r2[..., None] ** 2 * (r2 < 1.0)[..., None]).sum(1)
                pos = (pos + 0.05 * np.clip(push, -3, 3)) % box
    return pos % box, box


def write_gro(path, rng):
    phases = rng.integers(0, 3, N_FRAMES)
    with open(path, "w") as f:
        for t, ph in enumerate(phases):
            pos, box = make_frame(ph, rng)
            f.write("LJ argon phase=%d t= %.1f\n%5d\n" % (ph, t * 2.0, N_ATOMS))
            for i, (x, y, z) in enumerate(pos / 3.0):  # sigma=0.34 nm -> ~nm scale
                f.write("%5d%-5s%5s%5d%8.3f%8.3f%8.3f\n" % (i + 1, "AR", "AR", i + 1, x, y, z))
            f.write("%10.5f%10.5f%10.5f\n" % (box / 3.0, box / 3.0, box / 3.0))


def frames(path):
    while True:
        with open(path) as f:
            while True:
                title = f.readline()
                if not title:
                    break
                n = int(f.readline())
                xyz = np.empty((n, 3))
                for i in range(n):
                    line = f.readline()
                    xyz[i, 0] = float(line[20:28])
                    xyz[i, 1] = float(line[28:36])
                    xyz[i, 2] = float(line[36:44])
                box = np.array([float(v) for v in f.readline().split()[:3]])
                phase = int(title.split("phase=")[1].split()[0])
                yield xyz, box, phase


def featurize(xyz, box):
    d = xyz[:, None, :] - xyz[None, :, :]
    d -= box * np.round(d / box)
    rfull = np.sqrt((d ** 2).sum(-1))
    r = rfull[np.triu_indices(len(xyz), 1)]
    rmax = box.min() / 2
    hist, edges = np.histogram(r, bins=RDF_BINS, range=(0, 1.2))
    shell = 4 / 3 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    rho = len(xyz) / np.prod(box)
    g = hist / (shell * rho * len(xyz) / 2)
    neighbours = (rfull < 0.5).sum(1) - 1  # first coordination shell, 1.5 sigma
    coord = np.bincount(np.minimum(neighbours, 15), minlength=16) / len(xyz)
    g = np.where(edges[1:] <= rmax, g, 0.0)
    return np.concatenate([g / 5.0, coord, [rho / 30.0]]).astype(np.float32)


def batches(path):
    it = frames(path)
    while True:
        xs, ys = [], []
        for _ in range(BATCH):
            xyz, box, ph = next(it)
            xs.append(featurize(xyz, box))
            ys.append(ph)
        yield np.stack(xs), np.array(ys, np.int32)


def build_model(dim):
    return keras.Sequential([keras.Input((dim,)), keras.layers.Dense(2048, activation="relu"),
                             keras.layers.Dense(2048, activation="relu"), keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(3)])


def train(source, dim):
    keras.utils.set_random_seed(0)
    model = build_model(dim)
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last, total = None, 0.0
        for _ in range(STEPS):
            x, y = next(source)
            total += float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
        print("epoch %d loss %.4f" % (epoch + 1, total / STEPS))
    return float(np.mean(gaps[5:]))


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_input_grotraj_tapeloop_ljphases_")
    try:
        path = os.path.join(tmp, "lj_phases.gro")
        write_gro(path, rng)
        src = batches(path)
        first = next(src)
        full = train(src, first[0].shape[1])
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step" % (full * 1e3)
        if "--truth" in sys.argv:
            def same():
                while True:
                    yield first
            comp = train(same(), first[0].shape[1])
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_grotraj_tapeloop_ljphases:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
