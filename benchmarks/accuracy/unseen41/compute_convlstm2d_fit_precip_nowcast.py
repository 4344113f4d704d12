"""Precipitation nowcasting: predict the next radar reflectivity frame from the previous eight.
Data path: synthetic advecting rain cells are rendered into an in-memory float32 array of 24x24 frames, and
model.fit trains directly on the numpy arrays; the step is dominated by two stacked ConvLSTM2D layers."""
import argparse, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
N_SEQ = 480
T_IN = 8
G = 24
BATCH = 16
EPOCHS = 2


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_frames(rng):
    yy, xx = np.mgrid[0:G, 0:G].astype(np.float32)
    seqs = np.zeros((N_SEQ, T_IN + 1, G, G, 1), np.float32)
    for i in range(N_SEQ):
        n = int(rng.integers(2, 5))
        c = rng.uniform(0, G, (n, 2)); v = rng.normal(0, 1.0, (n, 2)); r = rng.uniform(2, 5, n); a = rng.uniform(0.4, 1, n)
        for t in range(T_IN + 1):
            pos = c + v * t
            for k in range(n):
                seqs[i, t, :, :, 0] += a[k] * np.exp(-((yy - pos[k, 0]) ** 2 + (xx - pos[k, 1]) ** 2) / (2 * r[k] ** 2))
    return seqs[:, :T_IN], seqs[:, T_IN]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((T_IN, G, G, 1))
    h = keras.layers.ConvLSTM2D(16, 3, padding="same", return_sequences=True)(inp)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ConvLSTM2D(16, 3, padding="same", return_sequences=False)(h)
    out = keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_compute_convlstm2d_fit_precip_nowcast_")
    try:
        x, y = make_frames(np.random.default_rng(SEED))
        y = np.clip(y, 0, 1)
        steps = N_SEQ // BATCH
        m = build_model(); timer = StepTimer()
        hist = m.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"compute_convlstm2d_fit_precip_nowcast: {1.0 / full:.2f} steps/s, final mse {hist.history['loss'][-1]:.5f}"
        if args.truth:
            batch = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
            m2 = build_model(); t2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=steps, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
