"""Composer-style classification of piano performances stored as MIDI.

Each performance is a Standard MIDI File on disk (MThd/MTrk chunks, delta
times as variable-length quantities, running status, tempo meta events). A
plain Python generator decodes the binary event stream byte by byte, turns
note-on/note-off pairs into an 88-key piano roll at 16th-note resolution and
yields batches to model.fit, where a small 2-D CNN predicts the composer.
"""
import json
import os
import shutil
import struct
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N_FILES = 200
NOTES = 200
PPQ = 480
FRAMES = 128
KEYS = 88
BATCH = 32
STEPS = 45
EPOCHS = 2
COMPOSERS = 6


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def write_midi(path, composer, rng):
    centre = 48 + 5 * composer
    step = [120, 240, 60, 160, 120, 90][composer]
    events = []  # (tick, kind, pitch, velocity)
    t = 0
    for _ in range(NOTES):
        pitch = int(np.clip(centre + rng.integers(-12, 13) + 12 * (rng.random() < 0.2), 21, 108))
        dur = int(step * rng.integers(1, 4))
        events.append((t, 1, pitch, int(rng.integers(40, 110))))
        events.append((t + dur, 0, pitch, 0))
        t += int(step * rng.choice([0.5, 1, 1, 2]))
    events.sort()
    track = bytearray()
    track += b"\x00\xFF\x51\x03" + struct.pack(">I", 500000)[1:]  # tempo 120 bpm
    last, status = 0, None
    for tick, kind, pitch, vel in events:
        track += vlq(tick - last)
        last = tick
        st = 0x90 if kind else 0x80
        if st != status:  # running status: repeat the status byte only on change
            track.append(st)
            status = st
        track += bytes([pitch, vel if kind else 64])
    track += b"\x00\xFF\x2F\x00"
    with open(path, "wb") as fh:
        fh.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, PPQ))
        fh.write(b"MTrk" + struct.pack(">I", len(track)) + bytes(track))


def read_vlq(data, i):
    n = 0
    while True:
        b = data[i]
        i += 1
        n = (n << 7) | (b & 0x7F)
        if not b & 0x80:
            return n, i


def parse_midi(path):
    with open(path, "rb") as fh:
        data = fh.read()
    assert data[:4] == b"MThd"
    _, fmt, ntrk, ppq = struct.unpack(">IHHH", data[4:14])
    i = 14
    notes = []
    for _ in range(ntrk):
        assert data[i:i + 4] == b"MTrk"
        length = struct.unpack(">I", data[i + 4:i + 8])[0]
        i += 8
        end = i + length
        tick, status, open_notes = 0, None, {}
        while i < end:
            delta, i = read_vlq(data, i)
            tick += delta
            b = data[i]
            if b == 0xFF:  # meta event
                mtype, (mlen, i) = data[i + 1], read_vlq(data, i + 2)
                i += mlen
                if mtype == 0x2F:
                    break
                continue
            if b & 0x80:
                status = b
                i += 1
            kind = status & 0xF0
            p1, p2 = data[i], data[i + 1]
            i += 2
            if kind == 0x90 and p2 > 0:
                open_notes[p1] = (tick, p2)
            elif kind in (0x80, 0x90) and p1 in open_notes:
                start, vel = open_notes.pop(p1)
                notes.append((start, tick, p1, vel))
        i = end
    return notes, ppq


def piano_roll(notes, ppq):
    roll = np.zeros((FRAMES, KEYS), dtype=np.float32)
    per_frame = ppq / 4.0  # 16th notes
    for start, stop, pitch, vel in notes:
        a = int(start / per_frame)
        if a >= FRAMES:
            continue
        b = min(FRAMES, max(a + 1, int(stop / per_frame)))
        k = pitch - 21
        if 0 <= k < KEYS:
            roll[a:b, k] = np.maximum(roll[a:b, k], vel / 127.0)
    return roll[..., None]


def midi_batches(paths, labels, rng):
    while True:
        order = rng.permutation(len(paths))
        for s in range(0, len(order) - BATCH + 1, BATCH):
            idx = order[s:s + BATCH]
            rolls = [piano_roll(*parse_midi(paths[i])) for i in idx]
            yield np.stack(rolls), labels[idx]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FRAMES, KEYS, 1))
    x = keras.layers.Conv2D(12, (3, 5), padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(COMPOSERS, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train(data):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_smf_midi_generator_composers_")
    try:
        labels = rng.integers(0, COMPOSERS, N_FILES).astype(np.int32)
        paths = []
        for k in range(N_FILES):
            paths.append(os.path.join(tmp, "perf_%04d.mid" % k))
            write_midi(paths[-1], int(labels[k]), rng)
        full, loss = train(midi_batches(paths, labels, np.random.default_rng(SEED)))
        emit({"steps_per_second": 1.0 / full})
        msg = "midi: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            x, y = next(midi_batches(paths, labels, np.random.default_rng(SEED)))
            compute, _ = train(tf.data.Dataset.from_tensors((tf.constant(x), tf.constant(y))).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
