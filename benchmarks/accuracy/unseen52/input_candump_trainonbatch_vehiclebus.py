"""Driving-manoeuvre classification from a vehicle CAN bus.
A candump-style text log ("(ts) can0 1A0#DEADBEEF...") is written to a temp file; each batch
reads a slice of lines, parses ids and hex payloads, unpacks the wheel-speed, steering and
throttle signals bit by bit, resamples them to a fixed grid, and calls model.train_on_batch."""
import os, sys, json, time, struct, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each batch end; gaps only within an epoch."""
    def on_train_begin(self, logs=None):
        self.gaps = []
        self.t = None
    def on_epoch_begin(self, epoch, logs=None):
        self.t = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.t is not None:
            self.gaps.append(now - self.t)
        self.t = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

NAME = "input_candump_trainonbatch_vehiclebus"
B, STEPS, WIN, LINES_PER = 32, 300, 64, 192
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    rng = np.random.default_rng(0)
    path = os.path.join(tmp, "bus.log")
    nwin = 600
    with open(path, "w") as f:
        ts = 1.7e9
        for w in range(nwin):
            y = w % 5
            for k in range(LINES_PER):
                ts += 0.005
                cid = (0x1A0, 0x2B0, 0x3C0)[k % 3]
                v = int(2000 + 800 * np.sin(k / 9.0 * (1 + y)) + rng.integers(0, 50)) & 0xFFFF
                u = int(rng.integers(0, 1 << 16))
                payload = v.to_bytes(2, "big") + u.to_bytes(2, "little") + bytes([y * 40 + k % 40, 0, 0, 0])
                f.write("(%.6f) can0 %03X#%s\n" % (ts, cid, payload.hex().upper()))
    with open(path) as f:
        offsets = [0]
        for line in f:
            offsets.append(offsets[-1] + len(line))
    labels = [w % 5 for w in range(nwin)]

    def parse_window(fh, w):
        fh.seek(offsets[w * LINES_PER])
        chans = {0x1A0: [], 0x2B0: [], 0x3C0: []}
        for _ in range(LINES_PER):
            line = fh.readline().split()
            ts = float(line[0].strip("()"))
            cid, data = line[2].split("#")
            raw = bytes.fromhex(data)
            speed = int.from_bytes(raw[0:2], "big") * 0.01
            steer = (int.from_bytes(raw[2:4], "little") - 32768) / 327.68
            bits = [(raw[4] >> b) & 1 for b in range(8)]
            thr = sum(b << i for i, b in enumerate(bits)) / 255.0
            chans[int(cid, 16)].append((ts, speed, steer, thr))
        out = []
        for cid in (0x1A0, 0x2B0, 0x3C0):
            a = np.asarray(chans[cid])
            grid = np.linspace(a[0, 0], a[-1, 0], WIN)
            out.append(np.stack([np.interp(grid, a[:, 0], a[:, j]) for j in (1, 2, 3)], 1))
        x = np.concatenate(out, 1)
        return ((x - x.mean(0)) / (x.std(0) + 1e-6)).astype(np.float32)

    def make_batch(fh, r):
        ids = r.integers(0, nwin, B)
        return np.stack([parse_window(fh, w) for w in ids]), np.array([labels[w] for w in ids], np.int32)

    def make_model():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input((WIN, 9)),
            keras.layers.Conv1D(192, 5, padding="same", activation="relu"),
            keras.layers.Conv1D(192, 5, padding="same", activation="relu"),
            keras.layers.Conv1D(192, 5, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(5, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy")
        return m

    def train(batches):
        m = make_model()
        times, loss = [], 0.0
        for s in range(STEPS):
            x, y = batches()
            loss = float(m.train_on_batch(x, y))
            times.append(time.perf_counter())
        return sec_per_step(list(np.diff(times))), loss

    t0 = time.perf_counter()
    with open(path) as fh:
        r = np.random.default_rng(1)
        full, loss = train(lambda: make_batch(fh, r))
        emit({"steps_per_second": 1.0 / full})
        msg = "%s: loss=%.3f %.1f steps/s" % (NAME, loss, 1.0 / full)
        if TRUTH:
            fixed = make_batch(fh, np.random.default_rng(7))
            comp, _ = train(lambda: fixed)
            F = truth_fraction(full, comp)
            emit({"truth_input_fraction": F})
            msg += " truth=%.3f" % F
    print(msg + " wall=%.1fs" % (time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
