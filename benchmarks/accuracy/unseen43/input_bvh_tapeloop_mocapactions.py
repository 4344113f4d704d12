"""Action recognition for a motion-capture studio archive.

Clips are stored as BVH text (a HIERARCHY header plus one MOTION line of
Euler-angle channels per frame); for every batch the Python loop parses the
frame lines, runs forward kinematics over the skeleton in numpy to get
root-relative joint positions, and a @tf.function GradientTape step trains a
temporal Conv1D action classifier.
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
from keras import layers

N_CLIPS = 256
FRAMES = 48
BATCH = 16
STEPS = 330
N_ACT = 6
# (name, parent, offset)
SKELETON = [("Hips", -1, (0, 0, 0)), ("Spine", 0, (0, 10, 0)), ("Chest", 1, (0, 12, 0)),
            ("Neck", 2, (0, 14, 0)), ("Head", 3, (0, 6, 0)),
            ("LShoulder", 2, (5, 12, 0)), ("LArm", 5, (10, 0, 0)), ("LForeArm", 6, (12, 0, 0)), ("LHand", 7, (8, 0, 0)),
            ("RShoulder", 2, (-5, 12, 0)), ("RArm", 9, (-10, 0, 0)), ("RForeArm", 10, (-12, 0, 0)), ("RHand", 11, (-8, 0, 0)),
            ("LUpLeg", 0, (4, -3, 0)), ("LLeg", 13, (0, -18, 0)), ("LFoot", 14, (0, -17, 0)), ("LToe", 15, (0, -3, 5)),
            ("RUpLeg", 0, (-4, -3, 0)), ("RLeg", 17, (0, -18, 0)), ("RFoot", 18, (0, -17, 0)), ("RToe", 19, (0, -3, 5))]
J = len(SKELETON)


def write_bvh(rng, act):
    header = ["HIERARCHY"] + [f"JOINT {n} OFFSET {o[0]} {o[1]} {o[2]} CHANNELS 3 Zrotation Xrotation Yrotation"
                              for n, _, o in SKELETON]
    header += ["MOTION", f"Frames: {FRAMES}", "Frame Time: 0.0333333"]
    t = np.arange(FRAMES)[:, None]
    freq = 0.05 + 0.04 * act
    phase = rng.uniform(0, 2 * np.pi, (1, J * 3))
    amp = rng.uniform(5, 25 + 8 * act, (1, J * 3))
    ang = amp * np.sin(2 * np.pi * freq * t + phase) + rng.normal(0, 2, (FRAMES, J * 3))
    root = np.cumsum(np.full((FRAMES, 3), 0.3 * act) + rng.normal(0, 0.2, (FRAMES, 3)), 0)
    lines = [" ".join(f"{v:.4f}" for v in np.concatenate([root[f], ang[f]])) for f in range(FRAMES)]
    return "\n".join(header + lines)


def rot(axis, deg):
    r = np.radians(deg)
    c, s = np.cos(r), np.sin(r)
    m = np.zeros((len(deg), 3, 3))
    i, j = {"X": (1, 2), "Y": (2, 0), "Z": (0, 1)}[axis]
    k = 3 - i - j
    m[:, k, k] = 1
    m[:, i, i] = c
    m[:, j, j] = c
    m[:, i, j] = -s
    m[:, j, i] = s
    return m


def bvh_to_positions(text):
    lines = text.split("\n")
    start = lines.index("MOTION") + 3
    motion = np.array([[float(v) for v in ln.split()] for ln in lines[start:]])
    offsets = np.array([o for _, _, o in SKELETON], np.float64)
    glob_r = [None] * J
    glob_p = [None] * J
    for j, (_, parent, _) in enumerate(SKELETON):
        z, x, y = motion[:, 3 + 3 * j], motion[:, 4 + 3 * j], motion[:, 5 + 3 * j]
        local = rot("Z", z) @ rot("X", x) @ rot("Y", y)
        if parent < 0:
            glob_r[j] = local
            glob_p[j] = np.zeros((FRAMES, 3))
        else:
            glob_p[j] = glob_p[parent] + np.einsum("fij,j->fi", glob_r[parent], offsets[j])
            glob_r[j] = glob_r[parent] @ local
    pos = np.stack(glob_p, 1)  # frames, joints, 3
    vel = np.diff(pos, axis=0, prepend=pos[:1])
    return np.concatenate([pos / 40.0, vel], -1).reshape(FRAMES, J * 6).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(9)
    inp = keras.Input((FRAMES, J * 6))
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(inp)
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = layers.Conv1D(256, 5, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, layers.Dense(N_ACT)(x))


def train(batches):
    """batches: callable step -> (x, y)."""
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = 0.0
    for i in range(STEPS):
        x, y = batches(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_input_bvh_tapeloop_mocapactions_")
    try:
        rng = np.random.default_rng(43)
        acts = rng.integers(0, N_ACT, N_CLIPS)
        paths = []
        for k in range(N_CLIPS):
            p = os.path.join(tmp, f"take_{k:04d}.bvh")
            with open(p, "w") as f:
                f.write(write_bvh(rng, acts[k]))
            paths.append(p)
        order = np.random.default_rng(1).permutation(N_CLIPS)

        def from_files(i):
            idx = [order[(i * BATCH + b) % N_CLIPS] for b in range(BATCH)]
            xs = []
            for k in idx:
                with open(paths[k]) as f:
                    xs.append(bvh_to_positions(f.read()))
            return np.stack(xs), acts[idx].astype(np.int32)

        full, loss = train(from_files)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"mocap BVH clips: {1.0 / full:.2f} steps/s, loss {loss:.3f}"
        if truth:
            fixed = from_files(0)
            comp, _ = train(lambda i: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
