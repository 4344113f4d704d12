"""Ride-hailing trip ETA regression from the dispatch log.
Each trip record arrives as strings: pickup and dropoff geohashes (precision 9) and an ISO-8601
request timestamp. tf.data slices the string columns, batches them, and a tf.numpy_function map
decodes the geohashes bit by bit, parses the timestamps with datetime and builds haversine and
cyclical-time features before model.fit.
"""
import os, sys, json, time, math, tempfile, shutil, datetime
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 1024
STEPS = 75
EPOCHS = 4
ACC = os.environ.get("ACCURACY_OUT")
B32 = "0123456789bcdefghjkmnpqrstuvwxyz"
B32_IDX = {c: i for i, c in enumerate(B32)}


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

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


def gh_encode(lat, lon, prec=9):
    lat_r, lon_r = [-90.0, 90.0], [-180.0, 180.0]
    bits, bit, ch, even, out = [16, 8, 4, 2, 1], 0, 0, True, []
    while len(out) < prec:
        rng_ = lon_r if even else lat_r
        val = lon if even else lat
        mid = (rng_[0] + rng_[1]) / 2
        if val > mid:
            ch |= bits[bit]
            rng_[0] = mid
        else:
            rng_[1] = mid
        even = not even
        if bit < 4:
            bit += 1
        else:
            out.append(B32[ch])
            bit, ch = 0, 0
    return "".join(out)


def gh_decode(gh):
    lat_r, lon_r = [-90.0, 90.0], [-180.0, 180.0]
    even = True
    for c in gh:
        cd = B32_IDX[c]
        for mask in (16, 8, 4, 2, 1):
            r = lon_r if even else lat_r
            mid = (r[0] + r[1]) / 2
            if cd & mask:
                r[0] = mid
            else:
                r[1] = mid
            even = not even
    return (lat_r[0] + lat_r[1]) / 2, (lon_r[0] + lon_r[1]) / 2


def featurize(pick, drop, ts):
    out = np.empty((len(pick), 12), np.float32)
    for i in range(len(pick)):
        la1, lo1 = gh_decode(pick[i].decode())
        la2, lo2 = gh_decode(drop[i].decode())
        p1, p2 = math.radians(la1), math.radians(la2)
        dphi, dl = p2 - p1, math.radians(lo2 - lo1)
        a = math.sin(dphi / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        km = 2 * 6371.0 * math.asin(math.sqrt(a))
        bearing = math.atan2(math.sin(dl) * math.cos(p2),
                             math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl))
        t = datetime.datetime.strptime(ts[i].decode(), "%Y-%m-%dT%H:%M:%S%z")
        hod = (t.hour + t.minute / 60) / 24 * 2 * math.pi
        dow = t.weekday() / 7 * 2 * math.pi
        out[i] = (km / 10, math.sin(bearing), math.cos(bearing), math.sin(hod), math.cos(hod),
                  math.sin(dow), math.cos(dow), (la1 - 40.7) * 10, (lo1 + 74.0) * 10,
                  (la2 - 40.7) * 10, (lo2 + 74.0) * 10, float(t.weekday() >= 5))
    return out


def make_trips(n, rng):
    lat1 = 40.7 + rng.normal(0, 0.05, n)
    lon1 = -74.0 + rng.normal(0, 0.05, n)
    lat2 = lat1 + rng.normal(0, 0.03, n)
    lon2 = lon1 + rng.normal(0, 0.03, n)
    base = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
    secs = rng.integers(0, 60 * 86400, n)
    pick, drop, ts, eta = [], [], [], []
    for i in range(n):
        pick.append(gh_encode(lat1[i], lon1[i]))
        drop.append(gh_encode(lat2[i], lon2[i]))
        t = base + datetime.timedelta(seconds=int(secs[i]))
        ts.append(t.strftime("%Y-%m-%dT%H:%M:%S%z"))
        km = math.hypot((lat2[i] - lat1[i]) * 111, (lon2[i] - lon1[i]) * 84)
        rush = 1.6 if t.hour in (7, 8, 17, 18) and t.weekday() < 5 else 1.0
        eta.append(3 + km * 2.2 * rush + rng.normal(0, 1))
    return np.array(pick), np.array(drop), np.array(ts), np.array(eta, np.float32)


def make_dataset(cols, seed):
    pick, drop, ts, eta = cols

    def fe(p, d, t):
        x = tf.numpy_function(featurize, [p, d, t], tf.float32)
        x.set_shape((None, 12))
        return x

    ds = tf.data.Dataset.from_tensor_slices((pick, drop, ts, eta)).shuffle(len(eta), seed=seed).repeat()
    ds = ds.batch(BATCH).map(lambda p, d, t, y: (fe(p, d, t), y)).prefetch(2)
    return ds


def build_model():
    inp = keras.Input((12,))
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_input_geohash_numpyfn_rideshare_")
    try:
        keras.utils.set_random_seed(SEED)
        cols = make_trips(30000, np.random.default_rng(SEED))
        model = build_model()
        timer = StepTimer()
        hist = model.fit(make_dataset(cols, SEED), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            batch = next(iter(make_dataset(cols, SEED + 1)))
            keras.utils.set_random_seed(SEED)
            model2 = build_model()
            t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS,
                       callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("input_geohash_numpyfn_rideshare: mae %.3f min, %s" % (hist.history["mae"][-1], msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
