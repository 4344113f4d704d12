"""Churchyard survey photographs of gravestones -> century of the inscription.

Input path: a plain Python loop renders each weathered inscription crop in
NumPy (letter strokes drawn glyph by glyph, lichen blotches, frost spalling,
lean/shear of the stone, uneven lighting) and calls model.train_on_batch on
the batch.  Expected bottleneck: input (per-sample NumPy/Python rendering).
"""
import time; T0 = time.perf_counter()
import os, sys, json, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS = 32, 360
H, W = 40, 112
CENTURIES = ["17th c. (incised roman)", "18th c. (copperplate)", "19th c. (leaded)", "20th c. (sans)"]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


YY, XX = np.mgrid[0:H, 0:W]


def render_stone(rng, century):
    img = np.full((H, W), 0.55, np.float32) + 0.1 * (XX / W).astype(np.float32)   # lighting gradient
    stroke = [3, 1, 2, 2][century]
    slant = [0, 2, 0, 0][century]
    n_chars = rng.randint(8, 14)
    x = 4
    for _ in range(n_chars):                      # glyph-by-glyph incised strokes
        cw = rng.randint(5, 8)
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.5:                # vertical stroke
                cx = x + rng.randrange(cw)
                for yy in range(8, 30):
                    xx = cx + (slant * (30 - yy)) // 22
                    img[yy, xx:xx + stroke] -= 0.35
            else:                                 # horizontal stroke / serif
                cy = rng.choice([8, 18, 29])
                img[cy:cy + stroke, x:x + cw] -= 0.3
        if century == 0:
            img[29:31, x - 1:x + cw + 1] -= 0.15  # serifs at baseline
        x += cw + 2
        if x > W - 10:
            break
    for _ in range(rng.randint(2, 7)):            # lichen blotches
        cy, cx, r = rng.randrange(H), rng.randrange(W), rng.uniform(2, 7)
        mask = (YY - cy) ** 2 + (XX - cx) ** 2 < r * r
        img[mask] = img[mask] * 0.4 + rng.uniform(0.5, 0.8) * 0.6
    spall = np.array([[rng.random() < 0.03 for _ in range(W)] for _ in range(H)])
    img[spall] += 0.3                             # frost spalling
    lean = rng.uniform(-0.08, 0.08)
    for r in range(H):                            # stone lean -> row shear
        img[r] = np.roll(img[r], int(lean * (r - H / 2)))
    return np.clip(img, 0, 1)[..., None]


def survey_batch(rng):
    ys = [rng.randrange(len(CENTURIES)) for _ in range(BATCH)]
    xs = [render_stone(rng, c) for c in ys]
    return np.stack(xs), np.array(ys, np.int32)


def build_model():
    model = keras.Sequential([
        keras.Input((H, W, 1)),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(len(CENTURIES)),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(next_batch):
    model = build_model()
    stamps, loss = [], None
    for step in range(STEPS):
        x, y = next_batch()
        out = model.train_on_batch(x, y)
        loss = float(out[0])
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


keras.utils.set_random_seed(81)
rng = random.Random(81)
full, last_loss = train(lambda: survey_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("gravestones: %.1f ms/step, final loss %.3f, wall so far %.1f s" % (full * 1e3, last_loss, time.perf_counter() - T0))
if TRUTH:
    fixed = survey_batch(random.Random(82))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("gravestones truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
