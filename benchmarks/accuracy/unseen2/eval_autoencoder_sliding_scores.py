# Vibration monitoring: a dense autoencoder is trained briefly on healthy 128-sample windows,
# then six weeks of pump telemetry are scored day by day (model.predict on each day's sliding
# windows, reconstruction error per window), and a labelled incident set is evaluated.
import keras
import numpy as np

WINDOW, HOP, DAYS = 128, 8, 42
rng = np.random.default_rng(0)


def vibration(n, faulty=False, seed=0):
    local = np.random.default_rng(seed)
    t = np.arange(n) / 2000.0
    signal = np.sin(2 * np.pi * 50 * t) + 0.3 * np.sin(2 * np.pi * 120 * t)
    if faulty:
        signal += 0.8 * (local.random(n) < 0.002).astype(float) * local.normal(3, 1, n)
    return (signal + 0.1 * local.standard_normal(n)).astype(np.float32)


def windows(signal):
    starts = np.arange(0, len(signal) - WINDOW, HOP)
    return signal[starts[:, None] + np.arange(WINDOW)[None, :]]


healthy = windows(vibration(60_000, seed=1))
autoencoder = keras.Sequential(
    [
        keras.Input((WINDOW,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(WINDOW),
    ]
)
autoencoder.compile(keras.optimizers.Adam(1e-3), "mse", metrics=["mae"])
autoencoder.fit(healthy, healthy, batch_size=128, epochs=2, verbose=0)

daily_alerts = []
for day in range(DAYS):
    day_windows = windows(vibration(360_000, faulty=day % 7 == 3, seed=100 + day))
    reconstructed = autoencoder.predict(day_windows, batch_size=256, verbose=0)
    errors = np.mean((reconstructed - day_windows) ** 2, axis=1)
    daily_alerts.append(int((errors > 0.05).sum()))
print("alerts per day:", daily_alerts)

incidents = windows(np.concatenate([vibration(600_000, faulty=True, seed=7), vibration(600_000)]))
results = autoencoder.evaluate(incidents, incidents, batch_size=256, verbose=0, return_dict=True)
print("incident set:", {k: round(float(v), 5) for k, v in results.items()})
