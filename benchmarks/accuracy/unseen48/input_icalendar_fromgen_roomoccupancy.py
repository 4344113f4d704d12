"""Meeting-room occupancy forecasting for a campus facilities team: from one week of a
room's booking calendar, predict next week's peak-hour occupancy. The script writes one
iCalendar (.ics) export per room-week; a Python generator behind
tf.data.Dataset.from_generator unfolds and parses the VEVENT blocks (strptime on
DTSTART/DTEND) and rasterises them into a 7 x 96 quarter-hour grid fed to model.fit."""
import time
T0 = time.perf_counter()
import json, os, random, shutil, sys, tempfile
from datetime import datetime, timedelta
import numpy as np
import tensorflow as tf
import keras

SEED, BATCH, STEPS, EPOCHS, N_FILES = 48, 64, 300, 3, 600


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self._last = None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_calendars(folder):
    rng = random.Random(SEED)
    monday = datetime(2026, 3, 2)
    paths = []
    for r in range(N_FILES):
        busy = rng.uniform(0.2, 0.9)
        lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//u48 facilities//EN",
                 f"X-WR-CALNAME:Room B{r % 40:02d}", f"X-NEXT-WEEK-PEAK:{busy + rng.gauss(0, 0.05):.4f}"]
        for d in range(5):
            t = monday + timedelta(days=d, hours=8)
            while t.hour < 18:
                dur = rng.choice([15, 30, 30, 45, 60, 60, 90])
                if rng.random() < busy:
                    end = t + timedelta(minutes=dur)
                    lines += ["BEGIN:VEVENT", f"UID:{r}-{d}-{t:%H%M}@u48.example",
                              f"DTSTAMP:{monday:%Y%m%dT%H%M%SZ}",
                              f"DTSTART:{t:%Y%m%dT%H%M%S}", f"DTEND:{end:%Y%m%dT%H%M%S}",
                              f"SUMMARY:Sync meeting {rng.randint(1, 999)}",
                              f"ATTENDEE;CN=Person {rng.randint(1, 300)};ROLE=REQ-PARTICIPANT:mailto:p@u48.example",
                              "END:VEVENT"]
                t += timedelta(minutes=dur)
        lines.append("END:VCALENDAR")
        p = os.path.join(folder, f"room_{r:04d}.ics")
        with open(p, "w") as f:
            f.write("\r\n".join(lines) + "\r\n")
        paths.append(p)
    return paths


def parse_ics(path):
    with open(path, "r") as f:
        raw = f.read()
    raw = raw.replace("\r\n ", "")  # RFC 5545 line unfolding
    grid = np.zeros((7, 96, 2), np.float32)
    target = 0.0
    start = None
    week0 = None
    for line in raw.split("\r\n"):
        if not line:
            continue
        name, _, value = line.partition(":")
        name = name.split(";")[0]
        if name == "X-NEXT-WEEK-PEAK":
            target = float(value)
        elif name == "DTSTART":
            start = datetime.strptime(value, "%Y%m%dT%H%M%S")
            if week0 is None:
                week0 = start.replace(hour=0, minute=0, second=0) - timedelta(days=start.weekday())
        elif name == "DTEND" and start is not None:
            end = datetime.strptime(value, "%Y%m%dT%H%M%S")
            t = start
            while t < end:
                day = (t - week0).days
                slot = (t.hour * 60 + t.minute) // 15
                grid[day, slot, 0] = 1.0
                t += timedelta(minutes=15)
            grid[(start - week0).days, (start.hour * 60 + start.minute) // 15, 1] += 1.0
            start = None
    return grid, np.float32(target)


def make_gen(paths):
    def gen():
        order = np.random.default_rng(SEED).permutation(len(paths))
        i = 0
        while True:
            yield parse_ics(paths[order[i % len(paths)]])
            i += 1
    return gen


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((7, 96, 2)),
        keras.layers.Conv2D(16, (3, 5), padding="same", activation="relu"),
        keras.layers.Conv2D(16, (3, 5), padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_icalendar_fromgen_roomoccupancy_")
    try:
        paths = write_calendars(tmp)
        sig = (tf.TensorSpec((7, 96, 2), tf.float32), tf.TensorSpec((), tf.float32))
        ds = tf.data.Dataset.from_generator(make_gen(paths), output_signature=sig).batch(BATCH).prefetch(2)
        model = build_model()
        timer = StepTimer()
        hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit("steps_per_second", 1.0 / full)
        main_wall = time.perf_counter() - T0
        msg = f"icalendar occupancy: loss={hist.history['loss'][-1]:.4f} step={full*1000:.1f}ms main_wall={main_wall:.1f}s"
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            t2 = StepTimer()
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
