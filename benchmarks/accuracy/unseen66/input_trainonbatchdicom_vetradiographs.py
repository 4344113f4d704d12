"""Veterinary medicine: canine/feline thoracic radiograph classifier trained with
model.train_on_batch fed from Python. Each sample is a DICOM-like byte blob:
explicit-VR tag stream walked with struct (rows, cols, rescale, window, species,
many private tags), then pixel decode, rescale/windowing, random flips and crop.
Deliberate bottleneck: input."""
import os, sys, time, json, struct
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, SRC, CROP, NPRIV = 32, 120, 80, 64, 200


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def tag(group, elem, vr, value):
    return struct.pack("<HH2sH", group, elem, vr, len(value)) + value


def make_blobs(n, seed=66):
    rng = np.random.default_rng(seed)
    blobs = []
    yy, xx = np.mgrid[0:SRC, 0:SRC]
    for i in range(n):
        lab = int(rng.integers(2))
        img = rng.normal(1200, 150, (SRC, SRC))
        if lab:  # opacity (effusion-like) blob
            cy, cx = rng.integers(20, 60, 2)
            img += 900 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 120.0)
        raw = np.clip((img + 1024) / 1.0, 0, 65535).astype("<u2")
        parts = [b"DICM",
                 tag(0x0010, 0x2201, b"LO", [b"CANINE", b"FELINE"][i % 2]),
                 tag(0x0028, 0x0010, b"US", struct.pack("<H", SRC)),
                 tag(0x0028, 0x0011, b"US", struct.pack("<H", SRC)),
                 tag(0x0028, 0x1052, b"DS", b"-1024 "),
                 tag(0x0028, 0x1053, b"DS", b"1 "),
                 tag(0x0028, 0x1050, b"DS", b"1400"),
                 tag(0x0028, 0x1051, b"DS", b"1800"),
                 tag(0x0008, 0x0060, b"CS", b"DX"),
                 tag(0x0011, 0x0010, b"LO", str(lab).encode())]
        for k in range(NPRIV):  # vendor private block
            parts.append(tag(0x0019, 0x1000 + k, b"DS", f"{rng.uniform(0,9):.4f}".encode()))
        parts.append(tag(0x7FE0, 0x0010, b"OW", raw.tobytes()))
        blobs.append(b"".join(parts))
    return blobs


def decode(blob, rng):
    off, meta, priv = 4, {}, 0.0
    while off < len(blob):
        g, e, vr, ln = struct.unpack_from("<HH2sH", blob, off)
        off += 8
        val = blob[off:off + ln]
        off += ln
        if g == 0x7FE0:
            pix = np.frombuffer(val, "<u2")
        elif vr == b"US":
            meta[(g, e)] = struct.unpack("<H", val)[0]
        elif vr == b"DS":
            meta[(g, e)] = float(val.decode().strip())
            if g == 0x0019:
                priv += meta[(g, e)]
        else:
            meta[(g, e)] = val.decode().strip()
    rows, cols = meta[(0x0028, 0x0010)], meta[(0x0028, 0x0011)]
    hu = pix.reshape(rows, cols).astype(np.float32) * meta[(0x0028, 0x1053)] + meta[(0x0028, 0x1052)]
    c, w = meta[(0x0028, 0x1050)], meta[(0x0028, 0x1051)]
    img = np.clip((hu - (c - w / 2)) / w, 0, 1)
    if rng.random() < 0.5:
        img = img[:, ::-1]
    oy, ox = rng.integers(0, SRC - CROP + 1, 2)
    img = img[oy:oy + CROP, ox:ox + CROP]
    return img[..., None], np.float32(int(meta[(0x0011, 0x0010)]))


def build_model():
    m = keras.Sequential([keras.Input((CROP, CROP, 1)),
                          keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(batch_fn):
    keras.utils.set_random_seed(66)
    m = build_model()
    stamps = []
    for s in range(STEPS):
        x, y = batch_fn(s)
        loss = float(m.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    blobs = make_blobs(BATCH * 20)
    rng = np.random.default_rng(7)
    def full_batch(s):
        xs, ys = zip(*[decode(blobs[(s * BATCH + k) % len(blobs)], rng) for k in range(BATCH)])
        return np.stack(xs), np.array(ys, np.float32)
    full, loss = run(full_batch)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_trainonbatchdicom_vetradiographs] full {full*1000:.1f} ms/step loss {loss:.3f}"
    if TRUTH:
        fixed = full_batch(0)
        comp, _ = run(lambda s: fixed)
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
