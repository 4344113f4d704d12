# Online handwriting: digits captured on a tablet as pen trajectories (dx, dy, pen-up) of
# 80 points. A Conv1D + GRU classifier is trained for one short epoch (63 batches), then the
# whole archive of captured forms is classified with model.predict (one call per batch of
# forms, as they are exported), and the labelled audit set is scored with model.evaluate.
import keras
import numpy as np

POINTS, CLASSES = 80, 10
rng = np.random.default_rng(0)

# each digit is a template path through a few control points; writers add an affine
# distortion, a speed profile and jitter
TEMPLATES = [
    [(0, 1), (-0.6, 0.5), (-0.6, -0.5), (0, -1), (0.6, -0.5), (0.6, 0.5), (0, 1)],
    [(-0.2, 0.8), (0, 1), (0, -1)],
    [(-0.6, 0.6), (0, 1), (0.6, 0.6), (-0.6, -1), (0.6, -1)],
    [(-0.6, 0.9), (0.5, 0.6), (0, 0), (0.5, -0.6), (-0.6, -0.9)],
    [(0.3, 1), (-0.6, -0.2), (0.7, -0.2), (0.3, 0.3), (0.3, -1)],
    [(0.6, 1), (-0.5, 1), (-0.5, 0.1), (0.5, -0.1), (0.4, -0.9), (-0.6, -0.9)],
    [(0.5, 1), (-0.5, 0), (-0.4, -0.9), (0.4, -0.8), (0.4, -0.1), (-0.5, -0.2)],
    [(-0.6, 1), (0.6, 1), (-0.1, -1)],
    [(0, 0), (-0.5, 0.5), (0, 1), (0.5, 0.5), (-0.5, -0.5), (0, -1), (0.5, -0.5), (0, 0)],
    [(0.5, 0.3), (-0.4, 0.5), (0, 1), (0.5, 0.5), (0.3, -1)],
]


def resample(path, n):
    path = np.asarray(path, np.float64)
    seg = np.r_[0, np.cumsum(np.hypot(*np.diff(path, axis=0).T))]
    t = np.linspace(0, seg[-1], n)
    return np.c_[np.interp(t, seg, path[:, 0]), np.interp(t, seg, path[:, 1])]


BASE = np.stack([resample(t, POINTS) for t in TEMPLATES])


def write_digits(count, seed):
    local = np.random.default_rng(seed)
    labels = local.integers(0, CLASSES, count)
    shear = local.normal(0, 0.15, count)
    scale = local.uniform(0.7, 1.3, (count, 1, 2))
    xy = BASE[labels].copy()
    xy[..., 0] += shear[:, None] * xy[..., 1]
    xy = xy * scale + np.cumsum(local.normal(0, 0.015, (count, POINTS, 2)), axis=1)
    steps = np.diff(xy, axis=1, prepend=xy[:, :1])
    pen_up = (local.random((count, POINTS, 1)) < 0.02).astype(np.float64)
    return np.concatenate([steps * 10, pen_up], -1).astype(np.float32), labels


model = keras.Sequential(
    [
        keras.Input((POINTS, 3)),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.GRU(96, return_sequences=True),
        keras.layers.GRU(96),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(CLASSES),
    ]
)
model.compile(
    keras.optimizers.Adam(2e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
train_x, train_y = write_digits(4000, seed=1)
model.fit(train_x, train_y, batch_size=64, epochs=1, verbose=2)

archive_counts = np.zeros(CLASSES, int)
for form in range(12):
    forms_x, _ = write_digits(4000, seed=100 + form)
    predicted = model.predict(forms_x, batch_size=256, verbose=0).argmax(-1)
    archive_counts += np.bincount(predicted, minlength=CLASSES)
print("archive digits per class:", archive_counts.tolist())

audit_x, audit_y = write_digits(24000, seed=7)
print("audit:", model.evaluate(audit_x, audit_y, batch_size=256, verbose=0, return_dict=True))
