"""Turbine-blade borescope defect classification (aviation engine maintenance).

Input path: a Python GradientTape training loop. Every batch is built in
Python: each 8-bit borescope frame is decoded from a packed byte buffer,
randomly cropped, rotated/flipped, gamma-corrected, box-blurred with integral
images, and a synthetic crack/nick is drawn with a per-pixel Python random walk.
Custom loop (no model.fit).
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

N_IMG = 300
SIZE = 32
PAD = 8
CRACK_LEN = 60       # Python random-walk pixels per defect (cost knob)
BATCH = 32
STEPS = 100


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_frames(seed=69):
    rng = np.random.default_rng(seed)
    S = SIZE + PAD
    yy, xx = np.mgrid[0:S, 0:S]
    frames = []
    for i in range(N_IMG):
        a = rng.uniform(0, np.pi)
        img = 120 + 60 * np.sin((xx * np.cos(a) + yy * np.sin(a)) / rng.uniform(4, 9))
        img += rng.normal(0, 8, img.shape)
        frames.append(np.clip(img, 0, 255).astype(np.uint8).tobytes())
    return frames


def augment(buf, rng):
    S = SIZE + PAD
    img = np.frombuffer(buf, np.uint8).reshape(S, S).astype(np.float32)
    oy, ox = rng.integers(0, PAD + 1, 2)
    img = img[oy:oy + SIZE, ox:ox + SIZE]
    img = np.rot90(img, int(rng.integers(0, 4)))
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img = 255.0 * (img / 255.0) ** rng.uniform(0.7, 1.4)
    ii = np.pad(img, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    k = 3
    blur = (ii[k:, k:] - ii[:-k, k:] - ii[k:, :-k] + ii[:-k, :-k]) / (k * k)
    img = np.array(np.pad(blur, ((1, 1), (1, 1)), mode="edge"))
    label = int(rng.integers(0, 3))       # 0 clean, 1 crack, 2 nick
    if label:
        y, x = int(rng.integers(5, SIZE - 5)), int(rng.integers(5, SIZE - 5))
        n = CRACK_LEN if label == 1 else CRACK_LEN // 3
        for _ in range(n):
            d = rng.integers(-1, 2, 2)
            y = min(SIZE - 1, max(0, y + int(d[0]))); x = min(SIZE - 1, max(0, x + int(d[1])))
            img[y, x] = 20.0
            if label == 2 and x + 1 < SIZE:
                img[y, x + 1] = 20.0
    return img[..., None] / 255.0, label


def make_batch(frames, rng):
    idx = rng.integers(0, N_IMG, BATCH)
    out = [augment(frames[i], rng) for i in idx]
    return np.stack([o[0] for o in out]).astype(np.float32), np.asarray([o[1] for o in out], np.int32)


def build_model():
    return keras.Sequential([keras.Input((SIZE, SIZE, 1)),
                             keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                             keras.layers.MaxPooling2D(),
                             keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                             keras.layers.MaxPooling2D(),
                             keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                             keras.layers.GlobalAveragePooling2D(),
                             keras.layers.Dense(64, activation="relu"),
                             keras.layers.Dense(3)])


def train(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        g = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(g, model.trainable_variables))
        return loss

    stamps = []
    for s in range(STEPS):
        x, y = get_batch()
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    frames = make_frames()
    rng = np.random.default_rng(69)
    full, loss = train(lambda: make_batch(frames, rng))
    emit({"steps_per_second": 1.0 / full})
    print(f"[borescope_tapeloop] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, loss {loss:.3f}, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        xb, yb = make_batch(frames, np.random.default_rng(7))
        comp, _ = train(lambda: (xb, yb))
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[borescope_tapeloop] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
