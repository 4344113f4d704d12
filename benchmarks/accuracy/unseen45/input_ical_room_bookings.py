"""Meeting-room no-show prediction from iCalendar exports. Each calendar (.ics text) is unfolded and parsed in a Python generator (VEVENT properties, DTSTART/DTEND strptime, RRULE) into hour/weekday/duration features, wrapped by tf.data.Dataset.from_generator and consumed by a custom @tf.function GradientTape loop."""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

def train_loop(model, opt, loss_fn, get_batch, epochs, steps):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    gaps = []
    for e in range(epochs):
        last = None
        for s in range(steps):
            x, y = get_batch(e * steps + s)
            lv = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return float(np.mean(g))

BATCH, STEPS, EPOCHS = 64, 160, 3
import datetime
rng = np.random.default_rng(45)


def make_cal(r):
    ev = []
    for k in range(int(r.integers(8, 16))):
        s = datetime.datetime(2026, 1, 1) + datetime.timedelta(minutes=int(r.integers(0, 500000)))
        e = s + datetime.timedelta(minutes=int(r.integers(15, 180)))
        desc = "Agenda: " + " ".join(["sync", "review", "planning", "1:1"][r.integers(0, 4)] for _ in range(30))
        folded = "\r\n ".join(desc[i:i + 70] for i in range(0, len(desc), 70))
        ev.append(f"BEGIN:VEVENT\r\nUID:{k}@rooms\r\nDTSTART:{s:%Y%m%dT%H%M%S}Z\r\nDTEND:{e:%Y%m%dT%H%M%S}Z\r\n"
                  f"RRULE:FREQ=WEEKLY;COUNT={r.integers(1,10)}\r\nATTENDEE;CN=p{r.integers(0,40)}:mailto:x@y\r\n"
                  f"DESCRIPTION:{folded}\r\nEND:VEVENT")
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + "\r\n".join(ev) + "\r\nEND:VCALENDAR"


CALS = [make_cal(rng) for _ in range(300)]
LAB = rng.integers(0, 2, 300).astype(np.float32)


def parse_ics(text):
    text = text.replace("\r\n ", "")
    f = np.zeros(64, np.float32)
    for block in text.split("BEGIN:VEVENT")[1:]:
        props = {}
        for line in block.split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                props[k.split(";")[0]] = v
        s = datetime.datetime.strptime(props["DTSTART"], "%Y%m%dT%H%M%SZ")
        e = datetime.datetime.strptime(props["DTEND"], "%Y%m%dT%H%M%SZ")
        rr = dict(p.split("=") for p in props["RRULE"].split(";"))
        f[s.hour] += 1
        f[24 + s.weekday()] += 1
        f[31] += (e - s).total_seconds() / 3600
        f[32] += int(rr["COUNT"])
        f[33 + min(len(props["DESCRIPTION"].split()) // 10, 30)] += 1
    return f / 10.0


def gen():
    i = 0
    while True:
        yield parse_ics(CALS[i % 300]), LAB[i % 300:i % 300 + 1]
        i += 1


def build():
    return keras.Sequential([keras.Input((64,)), keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(1)])


tmp = tempfile.mkdtemp(prefix="u45_input_ical_room_bookings_")
try:
    ds = tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec((64,), tf.float32), tf.TensorSpec((1,), tf.float32))).batch(BATCH)
    it = iter(ds)
    keras.utils.set_random_seed(45)
    lossf = keras.losses.BinaryCrossentropy(from_logits=True)
    full = train_loop(build(), keras.optimizers.Adam(1e-3), lossf, lambda i: next(it), EPOCHS, STEPS)
    emit({"steps_per_second": 1.0 / full})
    msg = f"ical full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = next(it)
        keras.utils.set_random_seed(45)
        comp = train_loop(build(), keras.optimizers.Adam(1e-3), lossf, lambda i: fixed, EPOCHS, STEPS)
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
