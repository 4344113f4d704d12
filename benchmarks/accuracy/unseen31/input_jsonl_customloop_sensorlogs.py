"""Industrial sensor anomaly regressor: JSON-lines log parsed in Python, custom training loop."""
import argparse, json, os, shutil, sys, tempfile, time
import numpy as np
import tensorflow as tf
import keras


def sec_per_step(stamps):
    gaps = np.diff(np.asarray(stamps))
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")

BATCH, STEPS, FEAT = 256, 600, 48


def write_jsonl(path, n=BATCH * 12):
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        for i in range(n):
            rec = {"device": f"pump-{i % 17}", "ts": 1700000000 + i,
                   "readings": {f"s{k}": [float(v) for v in rng.normal(size=8)] for k in range(FEAT // 8)},
                   "meta": {"site": "plant-a", "shift": i % 3, "tags": ["raw", "v2"]},
                   "target": float(rng.normal())}
            f.write(json.dumps(rec) + "\n")


def parse(line):
    rec = json.loads(line)
    x = np.concatenate([np.asarray(rec["readings"][f"s{k}"], np.float32) for k in range(FEAT // 8)])
    x = (x - x.mean()) / (x.std() + 1e-6)
    return x, np.float32(rec["target"])


def batches(path):
    while True:
        with open(path) as f:
            xs, ys = [], []
            for line in f:
                x, y = parse(line); xs.append(x); ys.append(y)
                if len(xs) == BATCH:
                    yield np.stack(xs), np.asarray(ys)[:, None]; xs, ys = [], []


def build():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(768, activation="relu"), keras.layers.Dense(768, activation="relu"), keras.layers.Dense(1)])
    return m, keras.optimizers.Adam(1e-3)


def run(get_batch):
    model, opt = build()
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    stamps = []
    for _ in range(STEPS):
        x, y = get_batch()
        float(step(x, y)); stamps.append(time.perf_counter())
    return sec_per_step(stamps)


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u31_input_jsonl_customloop_sensorlogs_")
    try:
        path = os.path.join(tmp, "sensors.jsonl"); write_jsonl(path)
        t0 = time.perf_counter()
        gen = batches(path); full = run(lambda: next(gen)); report("steps_per_second", 1.0 / full)
        msg = f"sensorlogs: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
        if a.truth:
            x, y = next(batches(path))
            comp = run(lambda: (x, y)); F = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
