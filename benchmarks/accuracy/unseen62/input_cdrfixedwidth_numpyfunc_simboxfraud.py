"""SIM-box (interconnect bypass) fraud detection from call detail records.

Data path: each subscriber owns 48 fixed-width CDR text lines (switch
export format: timestamp, A-number, B-number, duration, cell id, IMEI,
call type). tf.data yields batches of subscriber ids; a tf.numpy_function
in the map slices every fixed-width field in Python, parses timestamps,
aggregates an hourly histogram, distinct-callee and distinct-cell counts
and duration statistics, then model.fit trains a fraud classifier.
Deliberate bottleneck: Python fixed-width CDR parsing inside numpy_function.
"""
import time
T0 = time.perf_counter()
import argparse, datetime, json, os
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 60
EPOCHS = 2
CALLS = 48
SUBS = 800
FEAT = 24 + 12


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
        g = self.gaps[5:]
        return sum(g) / len(g)


def make_cdrs(rng):
    base = datetime.datetime(2026, 3, 1)
    subs = []
    for s in range(SUBS):
        fraud = s % 7 == 0
        lines = []
        a = f"2547{s:08d}"
        for c in range(CALLS):
            t = base + datetime.timedelta(seconds=int(rng.integers(0, 86400 * 7)))
            b = f"2547{int(rng.integers(0, 10**8 if fraud else 300)):08d}"
            dur = int(rng.integers(20, 180) if fraud else rng.integers(1, 1800))
            cell = int(rng.integers(0, 2) if fraud else rng.integers(0, 60))
            imei = f"35{int(rng.integers(0, 10**13)):013d}"
            ctype = "MOC" if fraud or rng.random() < 0.5 else "MTC"
            lines.append(f"{t:%Y%m%d%H%M%S}{a:>15}{b:>15}{dur:06d}{cell:05d}{imei:>16}{ctype}")
        subs.append("\n".join(lines).encode())
    return np.array(subs, dtype=object)


def parse_batch_fn(records):
    def parse(ids):
        feats = np.zeros((len(ids), FEAT), np.float32)
        labels = np.zeros((len(ids),), np.float32)
        for r, sid in enumerate(ids):
            text = records[int(sid)].decode()
            hours = [0] * 24
            callees, cells, durs, moc = set(), set(), [], 0
            for line in text.split("\n"):
                ts = datetime.datetime.strptime(line[0:14], "%Y%m%d%H%M%S")
                b = line[29:44].strip()
                dur = int(line[44:50])
                cell = int(line[50:55])
                ctype = line[71:74]
                hours[ts.hour] += 1
                callees.add(b)
                cells.add(cell)
                durs.append(dur)
                moc += ctype == "MOC"
            d = np.asarray(durs, np.float32)
            feats[r, :24] = np.asarray(hours, np.float32) / CALLS
            feats[r, 24:] = [len(callees) / CALLS, len(cells) / 60.0, moc / CALLS, d.mean() / 1800, d.std() / 900,
                             np.median(d) / 1800, d.min() / 1800, d.max() / 1800, float((d < 200).mean()),
                             len(text) / 5000.0, float(int(sid) % 2), 1.0]
            labels[r] = float(len(cells) <= 2 and moc == CALLS)
        return feats, labels
    return parse


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    records = make_cdrs(np.random.default_rng(62))
    parse = parse_batch_fn(records)

    def tf_parse(ids):
        x, y = tf.numpy_function(parse, [ids], [tf.float32, tf.float32])
        x.set_shape((None, FEAT))
        y.set_shape((None,))
        return x, y

    ids = np.random.default_rng(1).integers(0, SUBS, size=BATCH * STEPS * EPOCHS + BATCH).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices(ids).batch(BATCH, drop_remainder=True).map(tf_parse).repeat().prefetch(1)
    full = run(ds)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_cdrfixedwidth_numpyfunc_simboxfraud: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
