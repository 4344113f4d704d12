"""Railway wheelset wear regression from raw laser wheel-profile scans.

Input path: tf.data over scan indices, with a tf.numpy_function map that, per
scan, drops laser dropouts, sorts points, resamples onto a fixed lateral grid
with np.interp, median-filters in a Python loop and walks the profile to find
flange tip / tread reference (flange height, thickness, qR proxy).
Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

N_SCANS = 1500
PTS = 700            # raw laser points per scan
GRID = 128
MEDWIN = 5           # median window (Python loop cost knob)
BATCH = 64
STEPS = 15
EPOCHS = 3


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_scans(seed=69):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-70, 70, (N_SCANS, PTS)), axis=1)
    wear = rng.uniform(0, 1, (N_SCANS, 3)).astype(np.float32)
    fh = 28 + 8 * wear[:, :1]; ft = 12 + 6 * wear[:, 1:2]
    flange = fh * np.exp(-((x + 50) / ft) ** 2)
    tread = 0.05 * x + 2 * wear[:, 2:3] * np.sin(x / 15)
    z = flange + tread + rng.normal(0, 0.15, x.shape)
    drop = rng.random(x.shape) < 0.05
    z[drop] = np.nan
    perm = rng.permuted(np.tile(np.arange(PTS), (N_SCANS, 1)), axis=1)
    xs = np.take_along_axis(x, perm, 1); zs = np.take_along_axis(z, perm, 1)
    return np.stack([xs, zs], -1).astype(np.float32), wear


SCANS, WEAR = make_scans()


def decode_scan(i):
    i = int(i)
    raw = SCANS[i]
    ok = ~np.isnan(raw[:, 1])
    pts = raw[ok]
    pts = pts[np.argsort(pts[:, 0])]
    gx = np.linspace(-70, 70, GRID)
    gz = np.interp(gx, pts[:, 0], pts[:, 1])
    h = MEDWIN // 2
    ks = list(range(0, GRID, 3))
    coarse = [float(np.median(gz[max(0, k - h):k + h + 1])) for k in ks]
    med = np.interp(np.arange(GRID), ks, coarse).tolist()
    tip_k, tip = 0, -1e9
    for k, v in enumerate(med):
        if v > tip:
            tip_k, tip = k, v
    ref = sum(med[GRID // 2 - 4:GRID // 2 + 4]) / 8.0
    thick = 0
    for k in range(tip_k, GRID):
        if med[k] < ref + 10.0:
            break
        thick += 1
    prof = (np.asarray(med, np.float32) - ref) / 30.0
    extra = np.asarray([(tip - ref) / 30.0, thick / 20.0, tip_k / GRID], np.float32)
    return np.concatenate([prof, extra]).astype(np.float32), WEAR[i]


def tf_decode(i):
    x, y = tf.numpy_function(decode_scan, [i], [tf.float32, tf.float32])
    x.set_shape((GRID + 3,)); y.set_shape((3,))
    return x, y


def build_model():
    inp = keras.Input((GRID + 3,))
    x = keras.layers.Reshape((GRID + 3, 1))(inp)
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(3)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


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


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    keras.utils.set_random_seed(69)
    ds = (tf.data.Dataset.range(N_SCANS).shuffle(N_SCANS, seed=69).repeat()
          .map(tf_decode, num_parallel_calls=2).batch(BATCH).prefetch(2))
    timer = StepTimer(); model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[wheelprofile_numpyfn] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        pairs = [decode_scan(i) for i in range(BATCH)]
        xb = np.stack([p[0] for p in pairs]); yb = np.stack([p[1] for p in pairs])
        tds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        t2 = StepTimer(); m2 = build_model()
        m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[wheelprofile_numpyfn] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
