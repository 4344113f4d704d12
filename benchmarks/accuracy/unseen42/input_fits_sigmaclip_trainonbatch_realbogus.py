"""Real/bogus classification of transient candidates from a sky survey.

Every candidate is stored as its own FITS file (2880-byte header blocks of
80-character cards, including pipeline HISTORY cards, then big-endian int16
science/reference/difference cutouts with BSCALE/BZERO). The loader parses
the headers by hand, rescales the pixels, subtracts an iteratively
sigma-clipped sky background and applies an asinh stretch per plane, then
calls model.train_on_batch on a small CNN.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N_CAND = 900
SIZE = 63
BATCH = 32
STEPS = 120
BLOCK = 2880


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def card(key, value, comment=""):
    if isinstance(value, str) and key not in ("HISTORY", "COMMENT"):
        value = "'%-8s'" % value
    if key in ("HISTORY", "COMMENT"):
        text = "%-8s%s" % (key, value)
    else:
        text = "%-8s= %20s / %s" % (key, value, comment)
    return text[:80].ljust(80)


def write_candidates(folder, rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] - SIZE // 2
    labels = rng.integers(0, 2, N_CAND).astype(np.float32)
    paths = []
    for i in range(N_CAND):
        sky = rng.uniform(200, 800)
        ref = sky + rng.normal(0, 12, (SIZE, SIZE))
        host = rng.uniform(0, 400) * np.exp(-(xx ** 2 + yy ** 2) / (2 * rng.uniform(3, 9) ** 2))
        ref += host
        sci = ref + rng.normal(0, 12, (SIZE, SIZE))
        if labels[i]:  # a real point source appears in the science image
            fwhm = rng.uniform(1.5, 3.0)
            sci += rng.uniform(80, 600) * np.exp(-((xx - rng.normal(0, 1)) ** 2 + (yy - rng.normal(0, 1)) ** 2) / (2 * fwhm ** 2))
        else:  # bogus: hot pixels / subtraction dipoles
            sci[rng.integers(0, SIZE, 6), rng.integers(0, SIZE, 6)] += rng.uniform(500, 3000, 6)
            sci += 150 * (np.exp(-((xx - 1) ** 2 + yy ** 2) / 4) - np.exp(-((xx + 1) ** 2 + yy ** 2) / 4))
        diff = sci - ref
        cube = np.stack([sci, ref, diff])
        bzero, bscale = 0.0, 0.25
        raw = np.clip(np.round((cube - bzero) / bscale), -32768, 32767).astype(">i2")
        cards = [card("SIMPLE", "T", "conforms to FITS standard"),
                 card("BITPIX", 16, "array data type"), card("NAXIS", 3),
                 card("NAXIS1", SIZE), card("NAXIS2", SIZE), card("NAXIS3", 3),
                 card("BSCALE", bscale), card("BZERO", bzero),
                 card("CANDID", "%d" % (1000000 + i)), card("MAGZP", round(rng.uniform(25, 26.5), 3)),
                 card("SEEING", round(rng.uniform(1.2, 3.0), 2), "arcsec"),
                 card("AIRMASS", round(rng.uniform(1.0, 2.0), 3))]
        for h in range(int(rng.integers(120, 180))):
            cards.append(card("HISTORY", "pipeline step %03d: calibrated with flat v%d.%d bias v%d" % (
                h, h % 7, h % 3, h % 11)))
        cards.append("END".ljust(80))
        header = "".join(cards)
        header += " " * (-len(header) % BLOCK)
        data = raw.tobytes()
        data += b"\0" * (-len(data) % BLOCK)
        path = os.path.join(folder, "cand_%07d.fits" % i)
        with open(path, "wb") as fh:
            fh.write(header.encode("ascii") + data)
        paths.append(path)
    return paths, labels


def parse_value(raw):
    v = raw.split("/", 1)[0].strip()
    if v.startswith("'"):
        return v.strip("'").strip()
    if v in ("T", "F"):
        return v == "T"
    try:
        return int(v)
    except ValueError:
        return float(v)


def read_fits(path):
    with open(path, "rb") as fh:
        header = {}
        history = []
        done = False
        while not done:
            block = fh.read(BLOCK).decode("ascii")
            for k in range(0, BLOCK, 80):
                c = block[k:k + 80]
                key = c[:8].strip()
                if key == "END":
                    done = True
                    break
                if key in ("HISTORY", "COMMENT"):
                    history.append(c[8:].rstrip())
                elif c[8:10] == "= ":
                    header[key] = parse_value(c[10:])
        shape = (header["NAXIS3"], header["NAXIS2"], header["NAXIS1"])
        n = int(np.prod(shape))
        raw = np.frombuffer(fh.read(n * 2), dtype=">i2").reshape(shape)
    return raw.astype(np.float32) * header["BSCALE"] + header["BZERO"], header


def sigma_clipped_stats(plane, sigma=3.0, iters=5):
    data = plane.ravel()
    for _ in range(iters):
        med = np.median(data)
        std = data.std()
        keep = np.abs(data - med) < sigma * std
        if keep.all():
            break
        data = data[keep]
    return np.median(data), data.std()


def preprocess(path):
    cube, header = read_fits(path)
    out = np.empty((SIZE, SIZE, 3), dtype=np.float32)
    for p in range(3):
        bkg, noise = sigma_clipped_stats(cube[p])
        out[..., p] = np.arcsinh((cube[p] - bkg) / (3 * noise + 1e-3))
    return out, header["SEEING"]


def batches(paths, labels, rng):
    while True:
        order = rng.permutation(len(paths))
        for s in range(0, len(order) - BATCH + 1, BATCH):
            idx = order[s:s + BATCH]
            xs, seeing = zip(*(preprocess(paths[i]) for i in idx))
            yield ((np.stack(xs), np.asarray(seeing, dtype=np.float32)[:, None]),
                   labels[idx][:, None])


def build_model():
    keras.utils.set_random_seed(SEED)
    img = keras.Input((SIZE, SIZE, 3))
    seeing = keras.Input((1,))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(img)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Concatenate()([x, seeing])
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([img, seeing], out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(source):
    model = build_model()
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next(source)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


def repeat_batch(batch):
    while True:
        yield batch


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_fits_sigmaclip_trainonbatch_realbogus_")
    try:
        paths, labels = write_candidates(tmp, rng)
        full, loss = train(batches(paths, labels, np.random.default_rng(SEED)))
        emit({"steps_per_second": 1.0 / full})
        msg = "realbogus: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            batch = next(batches(paths, labels, np.random.default_rng(SEED)))
            compute, _ = train(repeat_batch(batch))
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
