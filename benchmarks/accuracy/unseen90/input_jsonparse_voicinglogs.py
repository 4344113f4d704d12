import time; T0 = time.perf_counter()
"""Organ-pipe voicing log regression, JSON-lines generator -> from_generator -> fit.

An organ voicer works through a rank pipe by pipe, nicking the languid, moving
the upper lip (cut-up) and adjusting the toe hole, and the voicing bench logs a
JSON record per adjustment: pipe id, stop, scale, wind pressure, cut-up,
nicking count, toe diameter and the measured partial amplitudes. The logs are
written to a JSON-lines file in a temp directory; the generator reads the file,
json.loads each record, pulls nested fields out and builds a feature vector.
The model predicts the voicer's final cut-up correction (mm) for the pipe.
Batches are prefetched one ahead (.prefetch(1)).
"""
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


STOPS = ["Principal 8'", "Octave 4'", "Gedackt 8'", "Flute 4'", "Fifteenth 2'",
         "Mixture IV", "Trumpet 8'", "Salicional 8'", "Bourdon 16'", "Nazard 2 2/3'"]
N_PARTIALS = 24
N_RECORDS = 6000
BATCH = 64
STEPS_PER_EPOCH = 350
EPOCHS = 3
N_FEAT = len(STOPS) + 8 + N_PARTIALS


def write_voicing_log(path, seed):
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for i in range(N_RECORDS):
            stop = int(rng.integers(len(STOPS)))
            note = int(rng.integers(36, 97))
            pressure = float(rng.uniform(55, 95))     # mm water column
            cutup = float(rng.uniform(0.18, 0.32))    # ratio of mouth width
            partials = (np.exp(-np.arange(N_PARTIALS) * rng.uniform(0.1, 0.6))
                        * rng.uniform(0.8, 1.2, N_PARTIALS))
            correction = (0.25 - cutup) * 8.0 + (pressure - 75) * 0.01 - partials[1] * 0.3
            rec = {
                "pipe": f"{STOPS[stop].split()[0][:3].upper()}-{note:03d}-{i:05d}",
                "stop": STOPS[stop],
                "note": note,
                "bench": {"wind_mm": round(pressure, 2), "temp_c": round(float(rng.uniform(14, 24)), 1)},
                "mouth": {"cutup_ratio": round(cutup, 4), "width_mm": round(float(rng.uniform(8, 60)), 2),
                          "nicks": int(rng.integers(0, 30)), "languid_deg": round(float(rng.uniform(-2, 2)), 2)},
                "foot": {"toe_mm": round(float(rng.uniform(2, 14)), 2)},
                "spectrum": [{"n": k + 1, "db": round(float(20 * np.log10(p + 1e-6)), 3)}
                             for k, p in enumerate(partials)],
                "voicer": rng.choice(["AK", "MR", "JL"]).item(),
                "correction_mm": round(float(correction), 4),
            }
            fh.write(json.dumps(rec) + "\n")


def voicing_records(path):
    def gen():
        while True:
            with open(path) as fh:
                for line in fh:
                    rec = json.loads(line)
                    stop_onehot = [1.0 if rec["stop"] == s else 0.0 for s in STOPS]
                    b, m, f = rec["bench"], rec["mouth"], rec["foot"]
                    nums = [rec["note"] / 96.0, b["wind_mm"] / 100.0, (b["temp_c"] - 19) / 5.0,
                            m["cutup_ratio"] * 4.0, m["width_mm"] / 60.0, m["nicks"] / 30.0,
                            m["languid_deg"] / 2.0, f["toe_mm"] / 14.0]
                    spec = sorted(rec["spectrum"], key=lambda d: d["n"])
                    db = [(d["db"] + 40.0) / 40.0 for d in spec]
                    yield (np.asarray(stop_onehot + nums + db, dtype=np.float32),
                           np.float32(rec["correction_mm"]))
    return gen


def make_dataset(path):
    ds = tf.data.Dataset.from_generator(
        voicing_records(path),
        output_signature=(tf.TensorSpec((N_FEAT,), tf.float32), tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH).prefetch(1)


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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    keras.utils.set_random_seed(5)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    workdir = tempfile.mkdtemp(prefix="u90_input_jsonparse_voicinglogs_")
    try:
        path = os.path.join(workdir, "voicing_bench.jsonl")
        write_voicing_log(path, 1742)
        sec, loss = train(make_dataset(path))
        emit({"steps_per_second": 1.0 / sec})
        summary = (f"voicinglogs from_generator+prefetch(1) fit: {EPOCHS}x{STEPS_PER_EPOCH} steps, "
                   f"{sec*1000:.1f} ms/step, loss {loss:.4f}")
        if TRUTH:
            batch = next(iter(make_dataset(path)))
            csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((sec - csec) / sec, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(summary + f", total {time.perf_counter() - T0:.1f}s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
