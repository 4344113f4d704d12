"""Credit-limit scoring model retrained in short epochs; after every epoch a
callback exports a versioned SavedModel for the serving fleet
(model.export(.../<version>)) and also writes a .keras checkpoint. The exports
dominate the wall time."""
import argparse, json, os, shutil, tempfile, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_FEAT = 128, 8, 70, 40


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


class ExportEachEpoch(keras.callbacks.Callback):
    def __init__(self, root):
        super().__init__(); self.root, self.seconds = root, 0.0
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        self.model.export(os.path.join(self.root, "serving", str(epoch + 1)), verbose=False)
        self.model.save(os.path.join(self.root, f"ckpt_epoch{epoch + 1:02d}.keras"))
        self.seconds += time.perf_counter() - t


def build_model():
    inp = keras.Input((N_FEAT,), name="applicant")
    x = keras.layers.Normalization()(inp)
    for units in (512, 512, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    return keras.Model(inp, keras.layers.Dense(1, name="limit")(x))


def train(data, root):
    keras.utils.set_random_seed(0)
    model = build_model()
    model.compile(optimizer="adam", loss="huber")
    timer, saver = StepTimer(), ExportEachEpoch(root)
    t = time.perf_counter()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, saver], verbose=0)
    return timer.sec_per_step(), saver.seconds, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u35_checkpoint_export_credit_")
    try:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(20000, N_FEAT)).astype(np.float32)
        y = (np.abs(x[:, :8]).sum(1, keepdims=True) * 1000).astype(np.float32)
        ds = (tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True)
              .cache().shuffle(160).repeat().prefetch(2))
        full, save_s, fit_s = train(ds, os.path.join(tmp, "run"))
        emit({"steps_per_second": 1.0 / full})
        msg = f"export_credit: {full*1000:.1f} ms/step, saves {save_s:.1f}s of fit {fit_s:.1f}s ({100*save_s/fit_s:.0f}%)"
        if args.truth:
            batch = next(iter(ds))
            compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(msg + f", wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
