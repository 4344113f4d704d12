"""Bearing-fault detection: each vibration window is a small CSV member of a
zip archive (deflated). A Python generator opens the archive, inflates and
parses one member per example with the csv module, and yields batches to
model.fit."""
import argparse, csv, io, json, os, shutil, tempfile, time, zipfile
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, WIN, CH, N_MEMBERS = 32, 200, 3, 128, 6, 2000


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last, self.n = [], None, 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None and self.n >= 5:
            self.gaps.append(now - self.last)
        self.last = now; self.n += 1
    def sec_per_step(self):
        return float(np.mean(self.gaps))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def write_archive(path, rng):
    t = np.arange(WIN) / 1000.0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(N_MEMBERS):
            fault = int(rng.integers(0, 3))
            freq = 50 + 40 * fault
            sig = np.sin(2 * np.pi * freq * t)[:, None] + 0.3 * rng.normal(size=(WIN, CH))
            buf = io.StringIO()
            w = csv.writer(buf)
            w.writerow(["ax", "ay", "az", "gx", "gy", "gz"])
            w.writerows(np.round(sig, 5).tolist())
            zf.writestr(f"unit{i % 40:02d}/window_{i:05d}_fault{fault}.csv", buf.getvalue())


def batches(path, seed=0):
    rng = np.random.default_rng(seed)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        while True:
            xs, ys = [], []
            for j in rng.integers(0, len(names), size=BATCH):
                name = names[j]
                with zf.open(name) as fh:
                    rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8")))[1:]
                xs.append(np.array([[float(v) for v in r] for r in rows], np.float32))
                ys.append(int(name.rsplit("fault", 1)[1][0]))
            yield np.stack(xs), np.array(ys, np.int32)


def build_model():
    return keras.Sequential([
        keras.Input((WIN, CH)),
        keras.layers.Conv1D(64, 7, activation="relu"),
        keras.layers.Conv1D(64, 5, strides=2, activation="relu"),
        keras.layers.Conv1D(128, 5, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(3),
    ])


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u35_input_zipfile_sensors_")
    try:
        archive = os.path.join(tmp, "vibration_windows.zip")
        write_archive(archive, np.random.default_rng(0))
        full = train(batches(archive))
        emit({"steps_per_second": 1.0 / full})
        msg = f"zipfile_sensors: {full*1000:.1f} ms/step"
        if args.truth:
            batch = next(batches(archive, seed=1))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(msg + f", wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
