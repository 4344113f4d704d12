"""6-DOF robot arm inverse-kinematics regressor trained with a custom GradientTape loop.

Each step the Python loop samples joint configurations, runs Denavit-Hartenberg forward
kinematics per sample (six 4x4 matrix products in Python), adds encoder noise and
end-effector pose noise, and converts rotations to quaternion features. The network learns
pose -> joint angles. The per-sample Python kinematics is the bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import math
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 48
STEPS = 2000
# UR5-like DH table: (d, a, alpha)
DH = [(0.089, 0.0, math.pi / 2), (0.0, -0.425, 0.0), (0.0, -0.392, 0.0),
      (0.109, 0.0, math.pi / 2), (0.095, 0.0, -math.pi / 2), (0.082, 0.0, 0.0)]


def dh_matrix(theta, d, a, alpha):
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def rot_to_quat(r):
    w = math.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2.0
    w4 = 4.0 * w + 1e-9
    return [w, (r[2, 1] - r[1, 2]) / w4, (r[0, 2] - r[2, 0]) / w4, (r[1, 0] - r[0, 1]) / w4]


def make_batch(rng):
    q = rng.uniform(-math.pi, math.pi, (BATCH, 6))
    feats = np.empty((BATCH, 7 + 6), np.float32)
    for b in range(BATCH):
        t = np.eye(4)
        for j, (d, a, alpha) in enumerate(DH):
            enc = q[b, j] + rng.normal(0, 0.002)
            t = t @ dh_matrix(enc, d, a, alpha)
        pos = t[:3, 3] + rng.normal(0, 0.001, 3)
        quat = rot_to_quat(t[:3, :3])
        feats[b, :3] = pos
        feats[b, 3:7] = quat
        feats[b, 7:] = np.sin(q[b] * 0.5)
    y = np.concatenate([np.sin(q), np.cos(q)], axis=1).astype(np.float32)
    return feats, y


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([keras.Input((13,)),
                             keras.layers.Dense(384, activation="relu"),
                             keras.layers.Dense(384, activation="relu"),
                             keras.layers.Dense(12)])


def train(batch_source, label):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = batch_source()
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    full, loss = train(lambda: make_batch(rng), "full")
    emit({"steps_per_second": 1.0 / full})
    msg = "robotarm FK tape loop: %.1f ms/step, %.2f steps/s, loss %.4f" % (full * 1e3, 1.0 / full, loss)
    if args.truth:
        fx, fy = make_batch(np.random.default_rng(SEED + 1))
        comp, _ = train(lambda: (fx, fy), "compute")
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
