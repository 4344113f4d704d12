# Classifies variable stars from unevenly sampled survey light curves. A keras.utils.PyDataset
# (default settings, no worker pool) computes a Lomb-Scargle periodogram for each star with
# NumPy, folds the light curve at the strongest period and bins it, and returns both as the
# model's two inputs.
import keras
import numpy as np
from truth import measure, timed_fit

KINDS, SAMPLES, FREQS, PHASE_BINS, BATCH = 4, 120, 160, 64, 16
rng = np.random.default_rng(0)
frequencies = np.linspace(0.05, 6.0, FREQS)  # cycles per day


def observe(kind):
    t = np.sort(rng.uniform(0, 90, SAMPLES))  # 90 nights, gaps and clumps
    period = rng.uniform(0.3, 12.0)
    phase = (t / period) % 1.0
    if kind == 0:  # pulsating: sawtooth-like
        flux = 1 - phase
    elif kind == 1:  # eclipsing: two dips per period
        flux = (
            1
            - 0.8 * np.exp(-((phase - 0.25) ** 2) / 0.002)
            - 0.4 * np.exp(-((phase - 0.75) ** 2) / 0.002)
        )
    elif kind == 2:  # rotational: smooth sinusoid
        flux = 1 + 0.3 * np.sin(2 * np.pi * phase)
    else:  # non-variable
        flux = np.ones_like(t)
    flux = flux + rng.normal(0, 0.08, SAMPLES)
    return t, flux, rng.uniform(0.02, 0.1, SAMPLES)


stars = [observe(i % KINDS) for i in range(2400)]
kinds = np.arange(2400) % KINDS


def lomb_scargle(t, y, dy):
    w = 1 / dy**2
    y = y - np.average(y, weights=w)
    omega = 2 * np.pi * frequencies[:, None]
    tau = np.arctan2(
        np.sum(w * np.sin(2 * omega * t), axis=1), np.sum(w * np.cos(2 * omega * t), axis=1)
    ) / (2 * omega[:, 0])
    arg = omega * (t - tau[:, None])
    c, s = np.cos(arg), np.sin(arg)
    power = np.sum(w * y * c, axis=1) ** 2 / np.sum(w * c * c, axis=1) + np.sum(
        w * y * s, axis=1
    ) ** 2 / np.sum(w * s * s, axis=1)
    return power / np.sum(w * y * y)


def features(t, y, dy):
    power = lomb_scargle(t, y, dy)
    best = frequencies[np.argmax(power)]
    phase = (t * best) % 1.0
    bins = np.minimum((phase * PHASE_BINS).astype(int), PHASE_BINS - 1)
    folded = np.bincount(bins, weights=y, minlength=PHASE_BINS) / np.maximum(
        np.bincount(bins, minlength=PHASE_BINS), 1
    )
    folded = (folded - folded.mean()) / (folded.std() + 1e-6)
    return power.astype(np.float32), folded.astype(np.float32)


class LightCurves(keras.utils.PyDataset):
    def __init__(self, steps=100_000):
        super().__init__()
        self.steps = steps

    def __len__(self):
        return self.steps

    def __getitem__(self, index):
        chosen = np.random.default_rng(index).choice(len(stars), BATCH, replace=False)
        power, folded = zip(*(features(*stars[i]) for i in chosen), strict=True)
        return (np.stack(power)[..., None], np.stack(folded)[..., None]), kinds[chosen]


periodogram = keras.Input((FREQS, 1), name="periodogram")
folded_curve = keras.Input((PHASE_BINS, 1), name="folded")
a = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(periodogram)
a = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(a)
a = keras.layers.MaxPooling1D(2)(a)
a = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(a)
a = keras.layers.GlobalMaxPooling1D()(a)
b = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(folded_curve)
b = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(b)
b = keras.layers.GlobalAveragePooling1D()(b)
h = keras.layers.Dense(256, activation="relu")(keras.layers.Concatenate()([a, b]))
model = keras.Model([periodogram, folded_curve], keras.layers.Dense(KINDS)(h))
model.compile(
    keras.optimizers.Adam(1e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(LightCurves(), steps_per_epoch=3, verbose=0)
timed_fit(model, LightCurves(), 300)
measure(model, LightCurves, 30)
