"""Day-ahead electricity-load forecasting with frequent CheckpointManager saves.

Two weeks of hourly load history plus calendar features per substation are
generated into numpy arrays; each step slices a batch (cheap).  The MLP
forecaster is a wide backbone, frozen as if pretrained on national-grid data,
plus a small trainable head fine-tuned for this utility; it predicts the next
48 hours in a custom tf.function loop.  The loop writes a
tf.train.CheckpointManager checkpoint (whole model + Adam state, max_to_keep=3)
every SAVE_EVERY steps (here after every step: the job runs on pre-emptible
spot machines) so that a pre-empted job can resume - the saves dominate the
wall time.  Step timing excludes the save itself.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 16
STEPS = 250
SAVE_EVERY = 1
N_SERIES = 4096
LAGS = 336
HORIZON = 48
CAL = 16
HIDDEN = 2560


def make_series(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(LAGS + HORIZON)
    scale = rng.uniform(50, 500, (N_SERIES, 1))
    daily = np.sin(2 * np.pi * (t[None] + rng.integers(0, 24, (N_SERIES, 1))) / 24)
    weekly = 0.3 * np.sin(2 * np.pi * t[None] / 168)
    load = scale * (1 + 0.4 * daily + weekly + 0.1 * rng.standard_normal((N_SERIES, len(t))))
    load = load / scale
    cal = rng.random((N_SERIES, CAL))
    x = np.concatenate([load[:, :LAGS], cal], axis=1).astype(np.float32)
    return x, load[:, LAGS:].astype(np.float32)


def build_model():
    backbone = keras.Sequential([
        keras.Input((LAGS + CAL,)),
        keras.layers.Dense(HIDDEN, activation="gelu"),
        keras.layers.Dense(HIDDEN, activation="gelu"),
        keras.layers.Dense(HIDDEN, activation="gelu"),
    ], name="grid_backbone")
    backbone.trainable = False
    return keras.Sequential([
        backbone,
        keras.layers.Dense(512, activation="gelu"),
        keras.layers.Dense(HORIZON),
    ])


def train(next_batch, ckpt_dir):
    keras.utils.set_random_seed(1)
    model = build_model()
    opt = keras.optimizers.Adam(3e-4)
    step_var = tf.Variable(0, dtype=tf.int64)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, step=step_var)
    manager = tf.train.CheckpointManager(ckpt, ckpt_dir, max_to_keep=3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.abs(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, losses, save_s = [], [], 0.0
    t_start = time.perf_counter()
    prev = t_start
    for step in range(STEPS):
        x, y = next_batch(step)
        losses.append(float(train_step(x, y)))
        now = time.perf_counter()
        gaps.append(now - prev)
        prev = now
        step_var.assign_add(1)
        if (step + 1) % SAVE_EVERY == 0:
            manager.save(checkpoint_number=step + 1)
            prev = time.perf_counter()
            save_s += prev - now
    loop_s = time.perf_counter() - t_start
    return float(np.mean(gaps[5:])), float(np.mean(losses[-20:])), save_s, loop_s, manager.latest_checkpoint


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_checkpoint_ckptmanager_gridload_")
    try:
        t0 = time.perf_counter()
        x, y = make_series()
        n_batches = N_SERIES // BATCH

        def next_batch(step):
            s = (step % n_batches) * BATCH
            return x[s:s + BATCH], y[s:s + BATCH]

        full, loss, save_s, loop_s, last = train(next_batch, os.path.join(tmp, "run1"))
        emit("steps_per_second", 1.0 / full)
        wall1 = time.perf_counter() - t0
        msg = ("checkpoint_ckptmanager_gridload: %.1f ms/step, MAE %.3f, saves %.1f s of %.1f s loop, "
               "plain-phase wall %.1f s (save share %.0f%%), last %s"
               % (full * 1e3, loss, save_s, loop_s, wall1, 100 * save_s / wall1, os.path.basename(last)))
        if args.truth:
            batch = next_batch(0)
            compute, _, _, _, _ = train(lambda step: batch, os.path.join(tmp, "run2"))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
