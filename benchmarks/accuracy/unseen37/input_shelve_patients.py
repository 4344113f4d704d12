"""Hospital readmission risk from patient records kept in a shelve key-value store.

Each patient record (a dict of numpy vitals, lab values and diagnosis codes) is
pickled into a `shelve` database on disk.  A Python generator opens the shelf and
fetches one record per example by key (disk read + unpickle), assembles the
features in Python and yields numpy batches into model.fit.
"""
import argparse, json, os, random, shelve, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 128
STEPS = 300
EPOCHS = 3
N_PATIENTS = 6000
N_CODES = 400
N_VITALS = 24 * 6          # 24 hourly readings of 6 vital signs
N_LABS = 40
N_FEAT = N_VITALS + N_LABS + N_CODES + 4


def write_shelf(path):
    rng = np.random.default_rng(0)
    with shelve.open(path, flag="n") as db:
        for i in range(N_PATIENTS):
            risk = rng.random()
            vitals = rng.normal(80 + 20 * risk, 10, size=(24, 6)).astype(np.float64)
            labs = {"lab_%02d" % j: float(rng.normal(1 + risk, 0.5)) for j in range(N_LABS)
                    if rng.random() < 0.8}
            codes = ["ICD%03d" % c for c in rng.integers(0, N_CODES, size=rng.integers(2, 20))]
            db["pt%06d" % i] = {
                "vitals": vitals, "labs": labs, "codes": codes,
                "age": int(30 + 50 * risk + rng.integers(0, 20)), "sex": rng.choice(["F", "M"]),
                "los_days": float(rng.exponential(3 + 4 * risk)),
                "readmitted": int(risk + 0.6 * rng.random() > 0.9),
            }


def record_features(rec, code_index):
    x = np.zeros(N_FEAT, np.float32)
    v = rec["vitals"]
    x[:N_VITALS] = ((v - v.mean(axis=0)) / (v.std(axis=0) + 1e-6)).ravel()
    o = N_VITALS
    for name, val in rec["labs"].items():
        x[o + int(name[4:])] = val
    o += N_LABS
    for c in rec["codes"]:
        x[o + code_index[c]] += 1.0
    o += N_CODES
    x[o] = rec["age"] / 100.0
    x[o + 1] = 1.0 if rec["sex"] == "F" else 0.0
    x[o + 2] = np.log1p(rec["los_days"])
    x[o + 3] = len(rec["codes"]) / 20.0
    return x, rec["readmitted"]


def batch_generator(path, seed=0):
    code_index = {"ICD%03d" % c: c for c in range(N_CODES)}
    rnd = random.Random(seed)
    with shelve.open(path, flag="r") as db:
        keys = list(db.keys())
        while True:
            rnd.shuffle(keys)
            for s in range(0, len(keys) - BATCH + 1, BATCH):
                xs, ys = [], []
                for k in keys[s:s + BATCH]:
                    x, y = record_features(db[k], code_index)
                    xs.append(x); ys.append(y)
                yield np.stack(xs), np.asarray(ys, np.float32)


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.AUC(from_logits=True, name="auc")])
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer],
                     shuffle=False, verbose=0)
    return timer.sec_per_step(), hist.history


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_input_shelve_patients_")
    try:
        t0 = time.perf_counter()
        path = os.path.join(tmp, "patients")
        write_shelf(path)
        full, hist = train(batch_generator(path))
        emit("steps_per_second", 1.0 / full)
        msg = "input_shelve_patients: %.1f ms/step, auc %.3f" % (full * 1e3, hist["auc"][-1])
        if args.truth:
            gen = batch_generator(path)
            xb, yb = next(gen)
            gen.close()
            ds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            compute, _ = train(ds)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
