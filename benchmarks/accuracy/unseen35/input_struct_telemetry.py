"""Engine telemetry regression: fixed-size little-endian binary records
(header + 48 float32 sensor channels) are read with f.read and parsed with
struct.unpack in Python, assembled into batches, and fed to a custom
tf.function training loop."""
import argparse, datetime, json, math, os, shutil, struct, tempfile, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, N_REC, N_CH = 256, 1600, 40000, 48
REC = struct.Struct("<IqHH" + "f" * N_CH + "f")   # engine id, timestamp, cycle, flags, sensors, target


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def write_records(path, rng):
    w = rng.normal(size=N_CH).astype(np.float32)
    with open(path, "wb") as f:
        for i in range(N_REC):
            s = rng.normal(size=N_CH).astype(np.float32)
            target = float(np.tanh(s @ w / 6.0))
            s[rng.random(N_CH) < 0.01] = np.nan          # logger dropouts
            f.write(REC.pack(i % 97, 1_700_000_000 + 10 * i, i % 300, 0, *s.tolist(), target))


def record_batches(path, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "rb") as f:
        while True:
            xs, ys = [], []
            for idx in rng.integers(0, N_REC, size=BATCH):
                f.seek(int(idx) * REC.size)
                fields = REC.unpack(f.read(REC.size))
                engine, ts, cycle, flags = fields[:4]
                # dropouts from the logger come through as NaN/inf: zero them
                sensors = [v if math.isfinite(v) else 0.0 for v in fields[4:4 + N_CH]]
                when = datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)
                sensors += [cycle / 300.0, when.hour / 23.0, when.weekday() / 6.0]
                xs.append(sensors)
                ys.append(fields[-1])
            yield np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def build_model():
    return keras.Sequential([
        keras.Input((N_CH + 3,)),
        keras.layers.Dense(256, activation="gelu"),
        keras.layers.Dense(256, activation="gelu"),
        keras.layers.Dense(128, activation="gelu"),
        keras.layers.Dense(1),
    ])


def run_loop(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[4:])), loss   # gaps of steps 5.. onward


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u35_input_struct_telemetry_")
    try:
        path = os.path.join(tmp, "telemetry.bin")
        write_records(path, np.random.default_rng(0))
        gen = record_batches(path)
        full, loss = run_loop(lambda: next(gen))
        emit({"steps_per_second": 1.0 / full})
        msg = f"struct_telemetry: {full*1000:.1f} ms/step, loss {loss:.4f}"
        if args.truth:
            xb, yb = next(record_batches(path, seed=1))
            compute, _ = run_loop(lambda: (xb, yb))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(msg + f", wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
