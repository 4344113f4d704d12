"""Geodesy / space weather: estimate a geomagnetic storm index from GNSS receiver data.

Each synthetic receiver-day is written as a RINEX-style observation text file
(epoch headers followed by per-satellite P1/P2/L1/L2 lines); a Python loader
parses the records every step, forms geometry-free slant TEC, levels phase to
code, flags cycle slips and maps to vertical TEC on a time x PRN grid, and a
@tf.function GradientTape loop trains a Conv1D regressor on the grids.
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

SEED = 1147
N_FILES = 160
N_EPOCHS_OBS = 240
N_PRN = 32
BATCH = 8
STEPS = 60
EPOCHS = 2
F1, F2 = 1575.42e6, 1227.60e6
K_TEC = (F1 ** 2 * F2 ** 2) / (40.3e16 * (F1 ** 2 - F2 ** 2))
LAM1, LAM2 = 299792458.0 / F1, 299792458.0 / F2


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def write_rinex(path, rng):
    kp = rng.uniform(0, 9)
    base_tec = 10 + 4 * kp
    lines = ["     3.04           OBSERVATION DATA    M                   RINEX VERSION / TYPE\n",
             "SYNTH                                                       MARKER NAME\n",
             "G    5 C1C C2W L1C L2W ELV                                  SYS / # / OBS TYPES\n",
             "                                                            END OF HEADER\n"]
    prns = rng.choice(np.arange(1, N_PRN + 1), 11, replace=False)
    rho = rng.uniform(2.0e7, 2.6e7, len(prns))
    amb1 = rng.integers(-5e6, 5e6, len(prns)).astype(float)
    amb2 = rng.integers(-5e6, 5e6, len(prns)).astype(float)
    for e in range(N_EPOCHS_OBS):
        sec = e * 30
        lines.append("> 2026 03 17 %02d %02d %10.7f  0 %2d\n" % (sec // 3600, (sec // 60) % 60, sec % 60, len(prns)))
        for j, prn in enumerate(prns):
            elev = 15 + 70 * abs(np.sin(0.01 * e + j))
            stec = (base_tec + 3 * np.sin(0.05 * e + j) * (1 + kp / 3)) / np.sin(np.radians(elev)) ** 0.8
            r = rho[j] + 80.0 * e
            ion1 = 40.3e16 * stec / F1 ** 2
            ion2 = 40.3e16 * stec / F2 ** 2
            p1 = r + ion1 + rng.normal(0, 0.5)
            p2 = r + ion2 + rng.normal(0, 0.5)
            if rng.random() < 0.003:
                amb1[j] += rng.integers(5, 50)
            l1 = (r - ion1) / LAM1 + amb1[j]
            l2 = (r - ion2) / LAM2 + amb2[j]
            lines.append("G%02d%14.3f  %14.3f  %14.3f  %14.3f  %6.2f\n" % (prn, p1, p2, l1, l2, elev))
    with open(path, "w") as fh:
        fh.writelines(lines)
    return kp


def parse_rinex(path):
    grid = np.zeros((N_EPOCHS_OBS, N_PRN, 2), np.float32)
    arcs = {}
    with open(path) as fh:
        for line in fh:
            if line.endswith("END OF HEADER\n"):
                break
        e = -1
        for line in fh:
            if line[0] == ">":
                e += 1
                continue
            prn = int(line[1:3])
            p1, p2 = float(line[3:17]), float(line[19:33])
            l1, l2 = float(line[35:49]), float(line[51:65])
            elev = float(line[67:73])
            arcs.setdefault(prn, []).append((e, p1, p2, l1, l2, elev))
    for prn, obs in arcs.items():
        a = np.array(obs)
        ep = a[:, 0].astype(int)
        code_tec = (a[:, 2] - a[:, 1]) * K_TEC
        phase_tec = (a[:, 3] * LAM1 - a[:, 4] * LAM2) * K_TEC
        slips = np.abs(np.diff(phase_tec, prepend=phase_tec[0])) > 5.0
        arc_id = np.cumsum(slips)
        level = np.zeros_like(phase_tec)
        for k in np.unique(arc_id):
            m = arc_id == k
            level[m] = phase_tec[m] + np.mean(code_tec[m] - phase_tec[m])
        zen = np.radians(90.0 - a[:, 5])
        mapping = 1.0 / np.sqrt(1.0 - (6371.0 / 6721.0 * np.sin(zen)) ** 2)
        grid[ep, prn - 1, 0] = level / mapping / 50.0
        grid[ep, prn - 1, 1] = 1.0
    return grid.reshape(N_EPOCHS_OBS, N_PRN * 2)


def load_batch(files, kps, idx):
    x = np.stack([parse_rinex(files[i]) for i in idx])
    y = np.array([kps[i] for i in idx], np.float32)[:, None] / 9.0
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_EPOCHS_OBS, N_PRN * 2))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="gelu")(inp)
    for _ in range(4):
        h = keras.layers.Conv1D(128, 5, padding="same", activation="gelu")(x)
        x = keras.layers.Add()([x, h])
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(batch_fn):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(epoch, s)
            loss = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    return float(np.mean(gaps[5:])), loss


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u47_input_rinexobs_tapeloop_ionospheretec_")
    try:
        rng = np.random.default_rng(SEED)
        files, kps = [], []
        for i in range(N_FILES):
            p = os.path.join(tmp, "rcv%03d0770.26o" % i)
            kps.append(write_rinex(p, rng))
            files.append(p)
        orders = [np.random.default_rng(SEED + e).permutation(N_FILES) for e in range(EPOCHS)]

        def real_batch(epoch, s):
            idx = orders[epoch][(s * BATCH) % N_FILES:(s * BATCH) % N_FILES + BATCH]
            return load_batch(files, kps, idx)

        sps, loss = train(real_batch)
        emit({"steps_per_second": 1.0 / sps})
        msg = ""
        if "--truth" in sys.argv:
            fixed = load_batch(files, kps, orders[0][:BATCH])
            csps, _ = train(lambda e, s: fixed)
            frac = min(max((sps - csps) / sps, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
        print("rinex tec: loss %.4f full %.4fs/step%s wall %.1fs"
              % (loss, sps, msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
