"""Aircraft engine-trend exceedance prediction from ACARS downlink messages.

Input path: ACARS engine-report messages are written as text shards to a temp
dir; tf.data.Dataset.list_files -> interleave(TextLineDataset) -> batch ->
map(tf.py_function) where Python parses each message (regex key=value fields,
tail/flight decode, hex CRC check, lat/lon decode, char-trigram hashing of the
free-text maintenance remark). Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os, re, shutil, tempfile, zlib
import numpy as np
import tensorflow as tf
import keras

N_SHARDS = 8
PER_SHARD = 800
REMARK_WORDS = 40    # free-text words per message (Python hashing cost knob)
HASH = 256
BATCH = 64
STEPS = 150
EPOCHS = 3
KV = re.compile(r"([A-Z0-9]+)=([-0-9.]+)")
POS = re.compile(r"POS=([NS])(\d{5})([EW])(\d{6})")
WORDS = ["VIB", "HIGH", "OIL", "LOW", "PRESS", "EGT", "MARGIN", "BLEED", "VALVE", "FAULT",
         "CHECK", "NORMAL", "SENSOR", "FLUCT", "START", "HUNG", "N1", "N2", "FUEL", "FILTER",
         "BYPASS", "CHIP", "DETECT", "ADVISORY", "RESET", "OK", "INOP", "DEFER", "MEL", "AOG"]


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def write_shards(d, seed=69):
    rng = np.random.default_rng(seed)
    files = []
    for s in range(N_SHARDS):
        lines = []
        for k in range(PER_SHARD):
            y = int(rng.integers(0, 2))
            egt = 600 + rng.normal(0, 25) + 40 * y
            rem = " ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS) - 6 * (1 - y), REMARK_WORDS))
            body = (f".N{int(rng.integers(100, 999))}{chr(65 + s)}{chr(65 + k % 26)} 4F FLT=UA{int(rng.integers(1, 9999)):04d} "
                    f"EGT={egt:.1f} N1={85 + rng.normal(0, 3):.2f} N2={95 + rng.normal(0, 2):.2f} "
                    f"FF={1200 + rng.normal(0, 80):.0f} OILP={55 + rng.normal(0, 4) - 5 * y:.1f} "
                    f"OILT={88 + rng.normal(0, 3):.1f} VIB={0.8 + rng.random() + 0.6 * y:.2f} "
                    f"POS=N{int(rng.integers(10000, 60000)):05d}W{int(rng.integers(10000, 130000)):06d} "
                    f"RMK {rem}")
            lines.append(f"{body} #CRC{zlib.crc32(body.encode()) & 0xFFFF:04X} Y{y}")
        p = os.path.join(d, f"acars_{s:02d}.txt")
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        files.append(p)
    return files


def parse_lines(batch):
    xs, ys = [], []
    for raw in batch.numpy():
        line = raw.decode("ascii")
        body, crc, lab = line.rsplit(" ", 2)
        ok = (zlib.crc32(body.encode()) & 0xFFFF) == int(crc[4:], 16)
        kv = {k: float(v) for k, v in KV.findall(body)}
        m = POS.search(body)
        lat = int(m.group(2)) / 1000.0 * (1 if m.group(1) == "N" else -1)
        lon = int(m.group(4)) / 1000.0 * (1 if m.group(3) == "E" else -1)
        rem = body.split(" RMK ", 1)[1]
        h = [0.0] * HASH
        for w in rem.split():
            for i in range(len(w) - 2):
                h[hash(w[i:i + 3]) % HASH] += 1.0
        num = [(kv.get("EGT", 0) - 600) / 50, (kv.get("N1", 0) - 85) / 5, (kv.get("N2", 0) - 95) / 5,
               (kv.get("FF", 0) - 1200) / 100, (kv.get("OILP", 0) - 55) / 5, (kv.get("OILT", 0) - 88) / 5,
               kv.get("VIB", 0), lat / 90, lon / 180, 1.0 if ok else 0.0]
        xs.append(num + [v / REMARK_WORDS for v in h]); ys.append(float(lab[1:]))
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def tf_parse(lines):
    x, y = tf.py_function(parse_lines, [lines], [tf.float32, tf.float32])
    x.set_shape((None, 10 + HASH)); y.set_shape((None,))
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((10 + HASH,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
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
    tmp = tempfile.mkdtemp(prefix="u69_input_acars_interleave_aircraftmsgs_")
    try:
        write_shards(tmp)
        files = tf.data.Dataset.list_files(os.path.join(tmp, "acars_*.txt"), shuffle=True, seed=69)
        ds = (files.repeat().interleave(tf.data.TextLineDataset, cycle_length=4, block_length=8,
                                        num_parallel_calls=2)
              .batch(BATCH, drop_remainder=True).map(tf_parse).prefetch(2))
        timer = StepTimer(); model = build_model()
        model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        print(f"[acars_interleave] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-_T0:.1f}s")
        if args.truth:
            xb, yb = next(iter(ds))
            tds = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            t2 = StepTimer(); m2 = build_model()
            m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            print(f"[acars_interleave] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
