import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter gaps between consecutive train batches within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

# Drifting ocean buoys report GPS fixes as NMEA 0183 sentences ($GPRMC / $GPGGA) with
# XOR checksums. Each train_on_batch call is fed a batch assembled in Python: checksum
# validation, ddmm.mmmm -> decimal degrees, haversine drift velocities over a 32-fix
# track. The model predicts the next-6-hour displacement.
BATCH = 32
STEPS = 60
TRACK = 32
N_BUOYS = 30
FIXES = 600
rng0 = np.random.default_rng(64005)


def checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return "%02X" % c


def dm(v, pos, neg, width):
    h = pos if v >= 0 else neg
    v = abs(v)
    d = int(v)
    return ("%0" + str(width) + "d%07.4f") % (d, (v - d) * 60), h


def make_tracks(rng):
    tracks = []
    for b in range(N_BUOYS):
        lat, lon = rng.uniform(-50, 50), rng.uniform(-170, 170)
        vlat, vlon = rng.normal(0, 0.01, 2)
        rows = []
        for k in range(FIXES):
            vlat += rng.normal(0, 0.002); vlon += rng.normal(0, 0.002)
            lat += vlat; lon += vlon
            hh, mm = (k // 6) % 24, (k % 6) * 10
            la, lh = dm(lat, "N", "S", 2); lo, oh = dm(lon, "E", "W", 3)
            rmc = "GPRMC,%02d%02d00.00,A,%s,%s,%s,%s,%.1f,%.1f,061226,,,A" % (hh, mm, la, lh, lo, oh, abs(vlat) * 600, 90.0)
            gga = "GPGGA,%02d%02d00.00,%s,%s,%s,%s,1,%02d,%.1f,0.0,M,0.0,M,," % (hh, mm, la, lh, lo, oh, int(rng.integers(4, 12)), rng.uniform(0.7, 3))
            rows.append("$%s*%s\r\n$%s*%s" % (rmc, checksum(rmc), gga, checksum(gga)))
        tracks.append(rows)
    return tracks


TRACKS = make_tracks(rng0)


def to_deg(s, h):
    i = s.index(".") - 2
    v = float(s[:i]) + float(s[i:]) / 60.0
    return -v if h in "SW" else v


def parse_fix(txt):
    out = {}
    for sent in txt.split("\r\n"):
        body, cs = sent[1:].split("*")
        if checksum(body) != cs:
            raise ValueError("bad checksum")
        f = body.split(",")
        if f[0] == "GPRMC":
            out["lat"], out["lon"] = to_deg(f[3], f[4]), to_deg(f[5], f[6])
            out["sog"] = float(f[7])
        else:
            out["nsat"], out["hdop"] = int(f[7]), float(f[8])
    return out


def make_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        b = int(rng.integers(0, N_BUOYS))
        k = int(rng.integers(0, FIXES - TRACK - 6))
        fx = [parse_fix(t) for t in TRACKS[b][k:k + TRACK + 6]]
        feats = []
        for a, c in zip(fx[:TRACK], fx[1:TRACK + 1]):
            p1, p2 = np.radians(a["lat"]), np.radians(c["lat"])
            dl = np.radians(c["lon"] - a["lon"])
            hav = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
            dist = 2 * 6371.0 * np.arcsin(np.sqrt(hav))
            feats.append([c["lat"] - a["lat"], c["lon"] - a["lon"], dist / 10.0, c["sog"] / 10.0, c["hdop"] / 3.0, c["nsat"] / 12.0])
        xs.append(feats)
        ys.append([fx[-1]["lat"] - fx[TRACK]["lat"], fx[-1]["lon"] - fx[TRACK]["lon"]])
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32) * 10


def build_model():
    keras.utils.set_random_seed(64)
    m = keras.Sequential([keras.Input((TRACK, 6)), keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
                          keras.layers.Conv1D(64, 3, padding="same", activation="relu"), keras.layers.Flatten(),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(2)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(fixed=None):
    model = build_model()
    rng = np.random.default_rng(3)
    gaps, last = [], None
    for i in range(STEPS):
        x, y = fixed if fixed is not None else make_batch(rng)
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


full, loss = run()
emit({"steps_per_second": 1.0 / full})
print("driftingbuoys nmea train_on_batch: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s" % (full, 1.0 / full, loss, time.perf_counter() - WALL0))
if TRUTH:
    fixed = make_batch(np.random.default_rng(3))
    comp, _ = run(fixed)
    frac = min(max((full - comp) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print("truth: full %.4f compute %.4f fraction %.3f" % (full, comp, frac))
