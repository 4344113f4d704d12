"""Multipath detection for a GNSS reference station: observations are stored
as RINEX-3 style text files (one file per 30-epoch arc, one line per
satellite and epoch).  A tf.data pipeline maps batches of file indices
through tf.numpy_function, which reads the text, parses the observation
records, forms code-minus-carrier and geometry-free combinations per
satellite, and returns 30x8 sequences for a Conv1D/GRU classifier in model.fit."""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, NARCS, T, NSAT = 32, 100, 3, 640, 30, 10
C, F1, F2 = 299792458.0, 1575.42e6, 1227.60e6


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_arc(path, rng, k):
    mp = k % 2
    lines = ["     3.04           OBSERVATION DATA    M                   RINEX VERSION / TYPE",
             "                                                            END OF HEADER"]
    base = rng.uniform(2.0e7, 2.5e7, NSAT)
    for t in range(T):
        lines.append("> 2026 12 05 06 %02d %10.7f  0 %2d" % (t // 2, (t % 2) * 30.0, NSAT))
        for s in range(NSAT):
            rho = base[s] + 800.0 * t + rng.normal(0, 0.5)
            m = (mp * 3.0 * np.sin(t / 3.0 + s)) if s < 3 else 0.0
            l1 = (rho - m * 0.1) * F1 / C + rng.normal(0, 0.01)
            l2 = (rho + 1.2) * F2 / C
            lines.append("G%02d%14.3f  %14.3f  %14.3f  %14.3f  %14.3f  " %
                         (s + 1, rho + m, l1, rho + 1.6 + m * 0.7, l2, 40 + rng.normal(0, 2) - 6 * mp * (s < 3)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def parse_arc(path):
    seq = np.zeros((T, NSAT, 5), np.float64)
    t = -1
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                t += 1
            elif line.startswith("G") and t >= 0:
                s = int(line[1:3]) - 1
                vals = [float(line[3 + 16 * j:3 + 16 * j + 14]) for j in range(5)]
                seq[t, s] = vals
    c1, l1, c2, l2, snr = (seq[..., j] for j in range(5))
    cmc = c1 - l1 * C / F1
    gf = l1 * C / F1 - l2 * C / F2
    cmc -= cmc.mean(0); gf -= gf.mean(0)
    feats = np.stack([cmc.mean(1), cmc.std(1), np.abs(cmc).max(1), gf.std(1),
                      snr.mean(1) / 50, snr.std(1) / 10, np.diff(c1, axis=0, prepend=c1[:1]).std(1) / 1e3,
                      (c1 - c2).std(1)], axis=1)
    return feats.astype(np.float32)


def build():
    keras.utils.set_random_seed(5)
    m = keras.Sequential([keras.Input((T, 8)), keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
                          keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
                          keras.layers.GRU(96), keras.layers.Dense(1)])
    m.compile(keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_rinex_numpyfn_gnss_")
    try:
        rng = np.random.default_rng(46)
        paths = []
        for k in range(NARCS):
            p = os.path.join(tmp, "arc%05d.26o" % k); write_arc(p, rng, k); paths.append(p)
        labels = np.array([k % 2 for k in range(NARCS)], np.float32)

        def load(idx):
            x = np.stack([parse_arc(paths[i]) for i in idx])
            return x, labels[idx]

        def tf_load(idx):
            x, y = tf.numpy_function(load, [idx], [tf.float32, tf.float32])
            x.set_shape((None, T, 8)); y.set_shape((None,))
            return x, y

        ds = (tf.data.Dataset.range(NARCS).shuffle(NARCS, seed=1).repeat()
              .batch(BATCH).map(tf_load).prefetch(1))
        t0 = time.perf_counter()
        timer = StepTimer()
        hist = build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        msg = "loss=%.4f sec/step=%.4f" % (hist.history["loss"][-1], full)
        if truth:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            t2 = StepTimer()
            build().fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_rinex_numpyfn_gnss: %s wall_fit=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
