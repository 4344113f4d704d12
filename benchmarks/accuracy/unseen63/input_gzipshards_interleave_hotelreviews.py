"""Hotel reviews: predict the star rating of guest reviews stored in gzip shards.

Input path: reviews are written as gzip-compressed JSON-lines shards in a temp
dir; tf.data.Dataset.list of shard paths -> interleave(from_generator(read_shard))
with cycle_length 4, where read_shard gunzips, json.loads each line, lowercases,
strips punctuation, tokenizes title+body and hashes unigrams/bigrams plus
sub-scores; then batch; model.fit consumes it.
Deliberate bottleneck: Python JSON decoding and tokenization per review.
"""
import time
T0 = time.perf_counter()
import argparse, gzip, json, os, shutil, string, tempfile, zlib
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 64
STEPS = 50
EPOCHS = 2
HASH_DIM = 2048
N_SHARDS = 8
PER_SHARD = 200

POS = "spotless friendly helpful comfortable quiet delicious great amazing lovely central spacious".split()
NEG = "dirty rude noisy broken cold smelly tiny slow disappointing overpriced cramped".split()
NEU = "room bed breakfast staff lobby pool view bathroom checkin location parking wifi shower".split()
PUNCT = str.maketrans("", "", string.punctuation)


def write_shards(root, seed=63):
    rng = np.random.default_rng(seed)
    paths = []
    for s in range(N_SHARDS):
        p = os.path.join(root, f"reviews-{s:03d}.jsonl.gz")
        with gzip.open(p, "wt") as f:
            for i in range(PER_SHARD):
                stars = int(rng.integers(1, 6))
                pool = POS if stars >= 4 else NEG if stars <= 2 else POS + NEG
                body = " ".join((pool if rng.random() < .4 else NEU)[int(rng.integers(11))] for _ in range(60))
                f.write(json.dumps({
                    "review_id": f"{s}-{i}", "hotel": {"id": int(rng.integers(500)), "city": "Lisbon"},
                    "title": body[:40].title() + "!", "body": body.capitalize() + ".",
                    "scores": {k: int(np.clip(stars + rng.integers(-1, 2), 1, 5))
                               for k in ("clean", "service", "value", "location")},
                    "stay": {"nights": int(rng.integers(1, 9)), "type": ["business", "couple", "family"][i % 3]},
                    "stars": stars}) + "\n")
        paths.append(p)
    return paths


def featurize(obj):
    x = np.zeros(HASH_DIM + 6, np.float32)
    text = (obj["title"] + " " + obj["body"]).lower().translate(PUNCT)
    toks = text.split()
    for t in toks + [a + "_" + b for a, b in zip(toks, toks[1:])]:
        x[zlib.crc32(t.encode()) % HASH_DIM] += 1.0
    x[:HASH_DIM] /= max(len(toks), 1) ** 0.5
    for j, k in enumerate(("clean", "service", "value", "location")):
        x[HASH_DIM + j] = obj["scores"][k] / 5
    x[HASH_DIM + 4] = obj["stay"]["nights"] / 8
    x[HASH_DIM + 5] = ["business", "couple", "family"].index(obj["stay"]["type"]) / 2
    return x, np.int32(obj["stars"] - 1)


def read_shard(path):
    with gzip.open(path.decode(), "rt") as f:
        for line in f:
            yield featurize(json.loads(line))


SIG = (tf.TensorSpec((HASH_DIM + 6,), tf.float32), tf.TensorSpec((), tf.int32))


def build_model():
    m = keras.Sequential([
        keras.Input((HASH_DIM + 6,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(5),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    sps = timer.sec_per_step()
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u63_input_gzipshards_interleave_hotelreviews_")
    try:
        paths = write_shards(root)
        ds = (tf.data.Dataset.from_tensor_slices(paths).shuffle(N_SHARDS, seed=63).repeat()
              .interleave(lambda p: tf.data.Dataset.from_generator(read_shard, args=(p,), output_signature=SIG),
                          cycle_length=4, block_length=8)
              .batch(BATCH))
        full = run(ds, "interleave")
        emit({"steps_per_second": 1.0 / full})
        if args.truth:
            xs, ys = zip(*(f for f, _ in zip(read_shard(paths[0].encode()), range(BATCH))))
            batch = (np.stack(xs), np.array(ys, np.int32))
            comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
