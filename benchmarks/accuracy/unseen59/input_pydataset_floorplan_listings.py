"""Real estate: estimate listing price from rasterised floor plans.

Data path: a keras.utils.PyDataset whose __getitem__ builds each listing's
floor-plan polygon string ("x y;x y;..." per room), parses it, and rasterises
every room into a 48x48 occupancy grid with a pure-Python/numpy
point-in-polygon test, plus a random flip/rotate augmentation. model.fit
consumes it directly (workers=1, no multiprocessing).
Bottleneck: Python parsing + rasterisation in __getitem__ (input).
"""
import time
WALL0 = time.perf_counter()
import json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, GRID = 16, 60, 2, 48


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


YY, XX = np.mgrid[0:GRID, 0:GRID].astype(np.float32) + 0.5


def plan_string(rng):
    rooms = []
    for _ in range(int(rng.integers(4, 10))):
        cx, cy = rng.uniform(8, 40, 2); n = int(rng.integers(4, 9))
        ang = np.sort(rng.uniform(0, 2 * np.pi, n)); rad = rng.uniform(3, 10, n)
        rooms.append(";".join("%.2f %.2f" % (cx + r * np.cos(a), cy + r * np.sin(a)) for a, r in zip(ang, rad)))
    return "|".join(rooms)


def rasterise(plan):
    img = np.zeros((GRID, GRID, 2), np.float32)
    area = 0.0
    for k, room in enumerate(plan.split("|")):
        pts = [tuple(float(v) for v in p.split()) for p in room.split(";")]
        inside = np.zeros((GRID, GRID), bool)
        j = len(pts) - 1
        for i in range(len(pts)):  # even-odd rule, one edge at a time
            xi, yi = pts[i]; xj, yj = pts[j]
            if yi != yj:
                cross = ((yi > YY) != (yj > YY)) & (XX < (xj - xi) * (YY - yi) / (yj - yi) + xi)
                inside ^= cross
            j = i
        img[..., 0] += inside
        img[..., 1] = np.maximum(img[..., 1], inside * (k + 1) / 8.0)
        area += float(inside.sum())
    return img, area


class FloorPlans(keras.utils.PyDataset):
    def __init__(self, seed=59):
        super().__init__(workers=1, use_multiprocessing=False)
        self.seed = seed
    def __len__(self):
        return STEPS
    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        xs = np.zeros((BATCH, GRID, GRID, 2), np.float32); ys = np.zeros((BATCH, 1), np.float32)
        for b in range(BATCH):
            img, area = rasterise(plan_string(rng))
            img = np.rot90(img, int(rng.integers(0, 4)))
            if rng.random() < 0.5:
                img = img[:, ::-1]
            xs[b] = img; ys[b, 0] = area / 500.0 + rng.normal(0, 0.1)
        return xs, ys


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((GRID, GRID, 2)),
                          keras.layers.Conv2D(16, 3, activation="relu", padding="same"), keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, activation="relu", padding="same"), keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(48, 3, activation="relu", padding="same"), keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(data, **kw):
    timer = StepTimer()
    build().fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step()


def main():
    full = run(FloorPlans())
    emit({"steps_per_second": 1.0 / full})
    print("input_pydataset_floorplan_listings: %.4f s/step (%.1f steps/s), wall %.1f s" % (full, 1 / full, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        x, y = FloorPlans()[0]
        comp = run(tf.data.Dataset.from_tensors((x, y)).repeat(), steps_per_epoch=STEPS)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
