# Classifies semiconductor wafer maps (die pass/fail on a 32x32 grid) into defect patterns:
# none, centre, donut, edge ring, edge local, local cluster, scratch, random. A small CNN
# is trained briefly on a labelled set; then the whole production lot is scored with
# test-time augmentation (the eight rotations and flips of each map, one model.predict per
# view, averaged), and the model is checked with model.evaluate on a labelled audit set.
import keras
import numpy as np

SIDE, PATTERNS = 32, 8
NAMES = ["none", "centre", "donut", "edge-ring", "edge-loc", "local", "scratch", "random"]


def wafer_maps(count, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE] - (SIDE - 1) / 2
    radius = np.hypot(xx, yy) / (SIDE / 2)
    angle = np.arctan2(yy, xx)
    on_wafer = radius <= 1.0
    labels = rng.integers(0, PATTERNS, count)
    fail = rng.random((count, SIDE, SIDE)) < rng.uniform(0.01, 0.05, (count, 1, 1))
    r, a = radius[None], angle[None]
    centre = r < rng.uniform(0.2, 0.4, (count, 1, 1))
    inner = rng.uniform(0.3, 0.5, (count, 1, 1))
    donut = (r > inner) & (r < inner + 0.2)
    ring = r > rng.uniform(0.85, 0.92, (count, 1, 1))
    spot = rng.uniform(-np.pi, np.pi, (count, 1, 1))
    edge_loc = (r > 0.75) & (np.abs(np.angle(np.exp(1j * (a - spot)))) < 0.5)
    cx, cy = rng.uniform(-8, 8, (2, count, 1, 1))
    local = np.hypot(xx[None] - cx, yy[None] - cy) < rng.uniform(2, 4, (count, 1, 1))
    slope = rng.uniform(-2, 2, (count, 1, 1))
    scratch = np.abs(yy[None] - slope * xx[None] - cy) < 0.8
    scratch &= np.abs(xx[None] - cx) < 10
    dense = rng.random((count, SIDE, SIDE)) < 0.25
    shapes = [np.zeros_like(centre), centre, donut, ring, edge_loc, local, scratch, dense]
    for k, shape in enumerate(shapes):
        chosen = labels == k
        fail[chosen] |= shape[chosen] & (rng.random(shape[chosen].shape) < 0.8)
    maps = np.where(on_wafer, 1.0 + fail, 0.0).astype(np.float32) / 2
    return maps[..., None], labels.astype(np.int32)


def build_model():
    inputs = keras.Input((SIDE, SIDE, 1))
    h = inputs
    for filters in (32, 64, 96):
        h = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(h)
        h = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(PATTERNS, activation="softmax")(h))
    model.compile(
        keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    return model


def views(maps):
    for k in range(4):
        rotated = np.rot90(maps, k, axes=(1, 2))
        yield rotated
        yield rotated[:, :, ::-1]


x_train, y_train = wafer_maps(3000, seed=0)
model = build_model()
model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=2)

lot, lot_truth = wafer_maps(6000, seed=1)
probabilities = np.zeros((len(lot), PATTERNS), np.float32)
for view in views(lot):
    probabilities += model.predict(np.ascontiguousarray(view), batch_size=256, verbose=0)
predicted = probabilities.argmax(1)
counts = np.bincount(predicted, minlength=PATTERNS)
print("lot yield by pattern:", dict(zip(NAMES, counts.tolist(), strict=True)))
print(f"TTA agreement with the hidden truth: {np.mean(predicted == lot_truth):.3f}")

x_audit, y_audit = wafer_maps(12000, seed=2)
loss, accuracy = model.evaluate(x_audit, y_audit, batch_size=256, verbose=0)
print(f"audit loss {loss:.3f} accuracy {accuracy:.3f}")
