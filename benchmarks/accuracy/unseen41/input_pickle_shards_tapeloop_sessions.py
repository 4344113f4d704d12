"""Next-purchase category prediction for e-commerce browsing sessions.
Data path: the clickstream export is a set of pickle shards, each a list of session dicts with nested event dicts
(sku, category, event type, price, timestamp); a Python generator unpickles shard after shard, featurises every
session in pure Python (crc32-hashed SKU bag with recency decay, event-type-weighted category counts, price and
dwell statistics) and feeds a custom @tf.function GradientTape training step in a Python loop."""
import argparse, itertools, json, os, pickle, shutil, sys, tempfile, time, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
N_SHARDS = 8
SESSIONS_PER_SHARD = 1500
N_CATS = 40
HASH_DIM = 2048
BATCH = 128
STEPS = 260
N_FEAT = HASH_DIM + N_CATS + 6
EV_W = {"view": 1.0, "click": 1.5, "cart": 3.0, "wishlist": 2.0}


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def write_shards(tmp, rng):
    paths = []
    for s in range(N_SHARDS):
        sessions = []
        for i in range(SESSIONS_PER_SHARD):
            target = int(rng.integers(N_CATS))
            n = int(rng.integers(10, 60))
            t = 1.7e9 + rng.uniform(0, 1e6)
            events = []
            for _ in range(n):
                cat = target if rng.random() < 0.35 else int(rng.integers(N_CATS))
                t += float(rng.exponential(40))
                events.append({"ts": t, "sku": f"SKU-{cat:02d}-{int(rng.integers(0, 5000)):05d}", "category": f"cat_{cat:02d}",
                               "type": ["view", "click", "cart", "wishlist"][int(rng.integers(4))],
                               "price": round(float(rng.lognormal(3, 0.6)), 2)})
            sessions.append({"session_id": f"s{s}-{i}", "user": int(rng.integers(1e6)), "events": events,
                             "next_purchase_category": f"cat_{target:02d}"})
        p = os.path.join(tmp, f"sessions-{s:03d}.pkl")
        with open(p, "wb") as f:
            pickle.dump(sessions, f, protocol=pickle.HIGHEST_PROTOCOL)
        paths.append(p)
    return paths


def featurise(sess):
    x = np.zeros(N_FEAT, np.float32)
    evs = sess["events"]
    t_end = evs[-1]["ts"]
    prices, dwell = [], []
    prev = evs[0]["ts"]
    for ev in evs:
        decay = 0.5 ** ((t_end - ev["ts"]) / 600.0)
        x[zlib.crc32(ev["sku"].encode()) % HASH_DIM] += decay
        x[HASH_DIM + int(ev["category"][4:])] += EV_W[ev["type"]] * decay
        prices.append(ev["price"])
        dwell.append(ev["ts"] - prev)
        prev = ev["ts"]
    pr = np.asarray(prices)
    x[HASH_DIM + N_CATS:] = [np.log1p(pr.mean()), np.log1p(pr.max()), np.log1p(np.mean(dwell)),
                             np.log1p(t_end - evs[0]["ts"]), len(evs) / 60.0,
                             sum(e["type"] == "cart" for e in evs) / len(evs)]
    return x, int(sess["next_purchase_category"][4:])


def batches(paths, seed):
    rng = np.random.default_rng(seed)
    for p in itertools.cycle(paths):
        with open(p, "rb") as f:
            sessions = pickle.load(f)
        order = rng.permutation(len(sessions))
        for i in range(0, len(order) - BATCH + 1, BATCH):
            feats = [featurise(sessions[j]) for j in order[i:i + BATCH]]
            yield np.stack([a for a, _ in feats]), np.array([b for _, b in feats], np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_FEAT,))
    h = keras.layers.Dense(768, activation="relu")(inp)
    h = keras.layers.Dense(384, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(N_CATS)(h)
    return keras.Model(inp, out)


def train(source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], None
    for _, (x, y) in zip(range(STEPS), source):
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_input_pickle_shards_tapeloop_sessions_")
    try:
        paths = write_shards(tmp, np.random.default_rng(SEED))
        full, loss = train(batches(paths, SEED))
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_pickle_shards_tapeloop_sessions: {1.0 / full:.2f} steps/s, final loss {loss:.4f}"
        if args.truth:
            batch = next(batches(paths, SEED))
            comp, _ = train(itertools.repeat(batch))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
