"""Restaurant reservations: predict no-shows from raw booking records.

Input path: a Python loop turns pipe-delimited booking records into features:
datetime.strptime for booking and seating timestamps, lead time, weekday and
hour one-hots, holiday proximity, party size, channel, guest history and
hashed special-request words; each numpy batch goes to model.train_on_batch.
Deliberate bottleneck: per-record string splitting and datetime parsing.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, zlib
from datetime import datetime, date
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 192
STEPS = 250
HASH_DIM = 512
N_BOOKINGS = 6000
CHANNELS = ["phone", "web", "app", "walkin", "concierge", "thirdparty"]
REQUESTS = ["window table", "birthday cake", "high chair", "gluten free", "quiet corner", "terrace",
            "anniversary", "wheelchair access", "vegan menu", "late arrival"]
HOLIDAYS = [date(2025, 1, 1), date(2025, 2, 14), date(2025, 4, 20), date(2025, 5, 11),
            date(2025, 12, 24), date(2025, 12, 31)]
FEAT = HASH_DIM + 7 + 24 + len(CHANNELS) + 4


def make_bookings(seed=63):
    rng = np.random.default_rng(seed)
    recs = []
    base = datetime(2025, 1, 1).timestamp()
    for i in range(N_BOOKINGS):
        seat = base + float(rng.integers(0, 364 * 86400))
        lead = float(rng.exponential(5 * 86400))
        made = seat - lead
        party = int(rng.integers(1, 11)); ch = int(rng.integers(len(CHANNELS)))
        prev_visits = int(rng.poisson(1.5)); prev_noshow = int(rng.binomial(prev_visits, .15))
        req = "; ".join(REQUESTS[int(k)] for k in rng.integers(0, len(REQUESTS), size=int(rng.integers(0, 3))))
        noshow = int(rng.random() < 0.08 + 0.04 * (lead > 14 * 86400) + 0.1 * (prev_noshow > 0) + 0.05 * (ch == 5))
        recs.append("|".join([f"R{i:07d}", datetime.fromtimestamp(made).strftime("%Y-%m-%d %H:%M:%S"),
                              datetime.fromtimestamp(seat).strftime("%Y-%m-%dT%H:%M"), str(party), CHANNELS[ch],
                              f"visits={prev_visits};noshows={prev_noshow}", req, str(noshow)]))
    return recs


def featurize(rec):
    _, made_s, seat_s, party, ch, hist, req, label = rec.split("|")
    made = datetime.strptime(made_s, "%Y-%m-%d %H:%M:%S")
    seat = datetime.strptime(seat_s, "%Y-%m-%dT%H:%M")
    x = np.zeros(FEAT, np.float32)
    lead_days = (seat - made).total_seconds() / 86400
    x[0] = np.log1p(max(lead_days, 0)); x[1] = int(party) / 10
    h = dict(kv.split("=") for kv in hist.split(";"))
    x[2] = int(h["visits"]) / 5; x[3] = int(h["noshows"]) / 3
    x[4] = min(abs((seat.date() - d).days) for d in HOLIDAYS) / 30
    x[5] = seat.month / 12; x[6] = seat.minute / 60
    o = 7
    x[o + seat.weekday()] = 1; o += 7
    x[o + seat.hour] = 1; o += 24
    x[o + CHANNELS.index(ch)] = 1; o += len(CHANNELS)
    x[o + made.weekday() % 4] = 1; o += 4
    for w in req.replace(";", " ").split():
        x[o + zlib.crc32(w.encode()) % HASH_DIM] += 1
    return x, float(label)


def build_model():
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def train(batch_fn, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    stamps = []
    t = time.perf_counter()
    for i in range(STEPS):
        x, y = batch_fn(i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    sps = float(np.mean(np.diff(stamps)[5:]))
    print(f"[{label}] {STEPS} steps in {time.perf_counter() - t:.1f}s, loss {loss:.4f}, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    recs = make_bookings()
    rng = np.random.default_rng(11)

    def python_batch(i):
        idx = rng.integers(0, len(recs), size=BATCH)
        xs, ys = zip(*(featurize(recs[j]) for j in idx))
        return np.stack(xs), np.array(ys, np.float32)

    full = train(python_batch, "train_on_batch")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        fixed = python_batch(0)
        comp = train(lambda i: fixed, "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
