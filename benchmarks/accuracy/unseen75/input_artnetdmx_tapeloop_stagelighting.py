"""Stage lighting: classify the cue type (fade, chase, blackout, colour wash...)
from recorded Art-Net captures of a theatre lighting desk. Each sample is a run
of 512-channel DMX frames stored as raw packet bytes; a Python loop decodes the
Art-Net header and the DMX payload with struct, maps channels to fixtures
(dimmer, RGB, 16-bit pan/tilt) and builds fade features, then feeds a custom
tf.GradientTape training step. Intended bottleneck: INPUT (Python DMX decoding)."""
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
import struct

SEED, BATCH, STEPS, EPOCHS = 75, 48, 90, 3
FRAMES, FIXTURES, CH = 4, 64, 8
NCLS = 6
NFEAT = FIXTURES * 6 * 2
HEADER = struct.Struct("<8sHHBBBBH")  # ID, opcode, proto ver, seq, phys, universe(2 as B,B), length
DMX = struct.Struct("<512B")


def make_captures(n, rng):
    caps, labels = [], []
    for _ in range(n):
        lab = int(rng.integers(NCLS))
        base = rng.integers(0, 256, 512)
        pkts = []
        for f in range(FRAMES):
            ramp = (f + 1) / FRAMES
            vals = (base * (ramp if lab % 2 == 0 else 1.0 - ramp) + rng.integers(0, 8 * (lab + 1), 512)) % 256
            hdr = HEADER.pack(b"Art-Net\x00", 0x5000, 14, f, 0, lab % 4, 0, 512)
            pkts.append(hdr + DMX.pack(*vals.astype(np.uint8).tolist()))
        caps.append(b"".join(pkts))
        labels.append(lab)
    return caps, np.array(labels, np.int32)


def decode_capture(blob):
    step = HEADER.size + 512
    frames = []
    for f in range(FRAMES):
        hdr = HEADER.unpack_from(blob, f * step)
        if hdr[0] != b"Art-Net\x00" or hdr[1] != 0x5000:
            raise ValueError("bad packet")
        dmx = DMX.unpack_from(blob, f * step + HEADER.size)
        fx = []
        for k in range(FIXTURES):
            d, r, g, b, pan, panf, tilt, tiltf = dmx[k * CH:(k + 1) * CH]
            inten = d / 255.0
            fx.append((inten, inten * r / 255.0, inten * g / 255.0, inten * b / 255.0,
                       ((pan << 8) | panf) * 540.0 / 65535.0 / 540.0,
                       ((tilt << 8) | tiltf) * 270.0 / 65535.0 / 270.0))
        frames.append(fx)
    a = np.asarray(frames, np.float32)  # FRAMES, FIXTURES, 6
    return np.concatenate([a.mean(0).ravel(), (a[-1] - a[0]).ravel()])


def make_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(256, activation="relu"), keras.layers.Dense(NCLS)])


def train(batches):
    """batches: callable(step) -> (x, y) numpy arrays."""
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for ep in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batches(ep * STEPS + s)
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


def main():
    rng = np.random.default_rng(SEED)
    caps, labels = make_captures(600, rng)

    def from_captures(i):
        idx = [(i * BATCH + j) % len(caps) for j in range(BATCH)]
        return np.stack([decode_capture(caps[k]) for k in idx]), labels[idx]

    full, loss = train(from_captures)
    compute = None
    if TRUTH:
        one = from_captures(0)
        compute, _ = train(lambda i: one)
    report("input_artnetdmx_tapeloop_stagelighting", full, compute, f"loss={loss:.3f}")


if __name__ == "__main__":
    main()
