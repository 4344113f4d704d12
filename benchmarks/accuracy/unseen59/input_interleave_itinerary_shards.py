"""Tourism: predict tour-package satisfaction from booked itineraries.

Data path: tf.data.Dataset.range(SHARDS).interleave(...) where each shard is a
tf.data.Dataset.from_generator that renders a shard of JSON itinerary
records, json.loads each one, and turns the legs (city, nights, transport,
ISO dates, activity tags) into a fixed 16-leg feature matrix with Python
date arithmetic and tag hashing; interleaved shards -> batch -> prefetch ->
model.fit.
Bottleneck: per-record JSON + datetime parsing in the shard generators (input).
"""
import time
WALL0 = time.perf_counter()
import datetime, json, os, sys, zlib
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, LEGS, SHARDS = 32, 60, 2, 16, 4
CITIES = ["Lisbon", "Porto", "Seville", "Granada", "Rome", "Florence", "Vienna", "Prague", "Krakow", "Split"]
TAGS = ["museum", "hiking", "wine", "beach", "food", "nightlife", "history", "boat", "spa", "market"]


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


def render(rng):
    d = datetime.date(2025, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 365)))
    legs = []
    for _ in range(int(rng.integers(3, LEGS + 1))):
        n = int(rng.integers(1, 6))
        legs.append({"city": CITIES[rng.integers(0, len(CITIES))], "check_in": d.isoformat(),
                     "check_out": (d + datetime.timedelta(days=n)).isoformat(),
                     "transport": ["rail", "bus", "flight", "ferry"][rng.integers(0, 4)],
                     "activities": [TAGS[i] for i in rng.choice(len(TAGS), int(rng.integers(1, 5)), replace=False)],
                     "price_eur": round(float(rng.uniform(60, 400)) * n, 2)})
        d += datetime.timedelta(days=n)
    return json.dumps({"booking": "B%08d" % rng.integers(0, 10 ** 8), "legs": legs})


def featurise(text):
    rec = json.loads(text)
    x = np.zeros((LEGS, 12), np.float32)
    for i, leg in enumerate(rec["legs"]):
        ci = datetime.date.fromisoformat(leg["check_in"]); co = datetime.date.fromisoformat(leg["check_out"])
        nights = (co - ci).days
        x[i, 0] = nights / 5.0
        x[i, 1] = ci.weekday() / 6.0
        x[i, 2] = ci.timetuple().tm_yday / 365.0
        x[i, 3] = (zlib.crc32(leg["city"].encode()) % 1000) / 1000.0
        x[i, 4] = ["rail", "bus", "flight", "ferry"].index(leg["transport"]) / 3.0
        x[i, 5] = leg["price_eur"] / nights / 400.0
        for t in leg["activities"]:
            x[i, 6 + zlib.crc32(t.encode()) % 6] += 1.0
    y = np.float32(np.tanh(x[:, 6:].sum() / 20.0 - x[:, 5].mean()))
    return x, y


def shard_gen(shard):
    rng = np.random.default_rng(5900 + int(shard))
    while True:
        x, y = featurise(render(rng))
        yield x, np.array([y], np.float32)


def make_ds():
    sig = (tf.TensorSpec((LEGS, 12), tf.float32), tf.TensorSpec((1,), tf.float32))
    shards = tf.data.Dataset.range(SHARDS).interleave(
        lambda s: tf.data.Dataset.from_generator(shard_gen, output_signature=sig, args=(s,)),
        cycle_length=SHARDS, block_length=1)
    return shards.batch(BATCH).prefetch(2)


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((LEGS, 12)), keras.layers.Bidirectional(keras.layers.GRU(64)),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    timer = StepTimer()
    build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    full = run(make_ds())
    emit({"steps_per_second": 1.0 / full})
    print("input_interleave_itinerary_shards: %.4f s/step (%.1f steps/s), wall %.1f s" % (full, 1 / full, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
