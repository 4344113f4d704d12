"""Film dailies: predict whether the director circled a take from the camera
report of each roll. A tf.data pipeline batches record indices and calls
tf.numpy_function in a map to parse the camera-report text in Python (clip ids,
SMPTE timecode in/out with 29.97 drop-frame conversion, lens, T-stop, ISO,
white balance, take numbers, notes); it feeds model.fit.
Intended bottleneck: INPUT (tf.numpy_function parsing)."""
import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

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


def report(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    line = f"[{name}] sec/step={full*1000:.1f}ms steps/s={1.0/full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f" compute={compute*1000:.1f}ms truth_input_fraction={frac:.3f}"
    line += f" wall={time.perf_counter()-T0:.1f}s {extra}"
    print(line, flush=True)
import zlib

SEED, BATCH, STEPS, EPOCHS = 75, 64, 100, 3
NFEAT, CLIPS_PER_REPORT, NREPORTS = 256, 8, 1500
LENSES = ["18mm", "25mm", "32mm", "40mm", "50mm", "75mm", "100mm", "135mm"]
NOTES = "soft focus boom in frame great performance plane overhead flare nice dolly late cue missed mark".split()


def df_frames(h, m, s, f):
    # 29.97 drop-frame: drop 2 frame numbers every minute except every tenth
    total_min = h * 60 + m
    return (h * 3600 + m * 60 + s) * 30 + f - 2 * (total_min - total_min // 10)


def make_reports(rng):
    reports, labels = [], []
    for r in range(NREPORTS):
        lines = [f"ROLL A{r % 200:03d} | CAM A | DATE 2026-03-{1 + r % 28:02d} | DP M.KOWALSKI"]
        circled = 0
        for c in range(CLIPS_PER_REPORT):
            h, m, s = int(rng.integers(6, 20)), int(rng.integers(60)), int(rng.integers(60))
            dur = int(rng.integers(200, 4000))
            e = s + dur // 30
            good = rng.random() < 0.25
            circled += good
            lines.append(
                f"A{r % 200:03d}C{c:03d} ; TC {h:02d}:{m:02d}:{s:02d};{int(rng.integers(30)):02d} - "
                f"{h + e // 3600:02d}:{(m + e // 60) % 60:02d}:{e % 60:02d};{int(rng.integers(30)):02d} ; "
                f"{rng.choice(LENSES)} T{rng.choice([1.4, 2.0, 2.8, 4.0, 5.6])} ; ISO {rng.choice([400, 800, 1280, 3200])} ; "
                f"{rng.choice([3200, 4300, 5600])}K ; SC {rng.integers(1, 90)}{rng.choice(list('ABCD'))} TK {rng.integers(1, 15)} ; "
                f"{'CIRCLED' if good else 'NG'} ; " + " ".join(rng.choice(NOTES, 5)))
        reports.append("\n".join(lines))
        labels.append(1.0 if circled >= 3 else 0.0)
    return reports, np.array(labels, np.float32)


def parse_tc(tok):
    hms, f = tok.split(";")
    h, m, s = (int(x) for x in hms.split(":"))
    return df_frames(h, m, s, int(f))


def parse_report(text):
    v = np.zeros(NFEAT, np.float32)
    rows = text.split("\n")
    for row in rows[1:]:
        f = [p.strip() for p in row.split(" ; ")]
        clip, tc, lens, iso, wb, slate, status, notes = f
        a, b = tc[3:].split(" - ")
        dur = parse_tc(b) - parse_tc(a)
        mm = int(lens.split("mm")[0])
        tstop = float(lens.split(" T")[1])
        slot = zlib.crc32(clip[-4:].encode()) % 8
        v[slot * 8 + 0] += dur / 4000.0
        v[slot * 8 + 1] += mm / 135.0
        v[slot * 8 + 2] += tstop / 5.6
        v[slot * 8 + 3] += int(iso.split()[1]) / 3200.0
        v[slot * 8 + 4] += int(wb[:-1]) / 5600.0
        v[slot * 8 + 5] += 1.0 if status == "CIRCLED" else 0.0
        tk = int(slate.split("TK ")[1])
        v[slot * 8 + 6] += tk / 15.0
        for w in notes.split():
            v[64 + zlib.crc32(w.encode()) % (NFEAT - 64)] += 1.0
    return v


def make_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(768, activation="relu"),
                          keras.layers.Dense(384, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run(ds):
    model, timer = make_model(), StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    rng = np.random.default_rng(SEED)
    reports, labels = make_reports(rng)

    def parse_batch(idx):
        x = np.stack([parse_report(reports[i]) for i in idx])
        return x, labels[idx]

    def tf_parse(idx):
        x, y = tf.numpy_function(parse_batch, [idx], (tf.float32, tf.float32))
        x.set_shape((None, NFEAT))
        y.set_shape((None,))
        return x, y

    ds = (tf.data.Dataset.range(NREPORTS).shuffle(NREPORTS, seed=SEED).repeat()
          .batch(BATCH).map(tf_parse).prefetch(2))
    full = run(ds)
    compute = None
    if TRUTH:
        one = next(iter(ds))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
    report("input_cameralog_numpyfn_dailies", full, compute)


if __name__ == "__main__":
    main()
