"""Fisheries: predict catch-per-unit-effort class from trawl logbook records.

Input path: a custom tf.GradientTape loop fed from Python; every step parses a batch of raw
logbook CSV lines with the csv module and datetime.strptime, splits the species:kg catch
field, one-hot encodes gear and computes a haversine distance to the home port.
"""
import csv, datetime, io, json, math, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS = 96, 400
GEARS = ["OTB", "OTT", "PTB", "TBB", "SDN", "SSC", "GNS", "LLS"]
SPECIES = ["COD", "HAD", "WHG", "POK", "HKE", "MON", "PLE", "SOL", "NEP", "MAC", "HER", "LEM"]
PORT = (57.14, -2.09)


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_lines(rng, n=6000):
    buf = io.StringIO()
    w = csv.writer(buf)
    base = datetime.datetime(2021, 1, 1)
    for i in range(n):
        g = int(rng.integers(0, len(GEARS)))
        lat, lon = 55 + rng.uniform(0, 6), -6 + rng.uniform(0, 9)
        dur = int(rng.integers(60, 480))
        when = base + datetime.timedelta(minutes=int(rng.integers(0, 525600)))
        k = int(rng.integers(2, 7))
        sp = rng.choice(len(SPECIES), k, replace=False)
        kg = rng.gamma(2.0, 40 + 25 * g, k) * dur / 200
        catch = ";".join(f"{SPECIES[s]}:{v:.1f}" for s, v in zip(sp, kg))
        w.writerow([f"H{i:06d}", when.strftime("%Y-%m-%dT%H:%M"), f"{lat:.4f}", f"{lon:.4f}",
                    int(rng.integers(20, 400)), dur, GEARS[g], catch])
    return buf.getvalue().splitlines()


def haversine(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))


def parse_batch(lines):
    xs, ys = [], []
    for row in csv.reader(lines):
        hid, when, lat, lon, depth, dur, gear, catch = row
        t = datetime.datetime.strptime(when, "%Y-%m-%dT%H:%M")
        lat, lon, depth, dur = float(lat), float(lon), float(depth), float(dur)
        comp = [0.0] * len(SPECIES)
        total = 0.0
        for item in catch.split(";"):
            name, kg = item.split(":")
            comp[SPECIES.index(name)] = float(kg)
            total += float(kg)
        comp = [c / total for c in comp]
        onehot = [1.0 if gear == g else 0.0 for g in GEARS]
        doy = t.timetuple().tm_yday
        feats = [(lat - 58) / 2, (lon + 1.5) / 3, depth / 400, dur / 480, haversine(PORT, (lat, lon)) / 500,
                 math.sin(2 * math.pi * doy / 365), math.cos(2 * math.pi * doy / 365), t.hour / 24]
        xs.append(feats + onehot + comp)
        cpue = total / (dur / 60)
        ys.append(min(4, int(math.log1p(cpue) / 1.2)))
    return np.asarray(xs, np.float32), np.asarray(ys, np.int32)


def make_model():
    return keras.Sequential([
        keras.Input((8 + len(GEARS) + len(SPECIES),)),
        keras.layers.Dense(320, activation="relu"),
        keras.layers.Dense(320, activation="relu"),
        keras.layers.Dense(160, activation="relu"),
        keras.layers.Dense(5),
    ])


def run(batch_fn):
    keras.utils.set_random_seed(7)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = batch_fn(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    rng = np.random.default_rng(72)
    lines = make_lines(rng)
    order = np.random.default_rng(1).integers(0, len(lines), (STEPS, BATCH))
    full, loss = run(lambda i: parse_batch([lines[j] for j in order[i]]))
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"logbookcsv: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), loss {loss:.3f}"
    if TRUTH:
        fixed = parse_batch(lines[:BATCH])
        comp, _ = run(lambda i: fixed)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
