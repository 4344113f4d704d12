import time; T0 = time.perf_counter()
"""Chair stress-test rig: predict cycles-to-failure from fatigue-test traces.

The rig pushes on the seat and back of dining chairs (EN 12520 style cyclic
loading) and records load, seat deflection, back deflection and leg-joint
strain at 256 points per cycle block.  All batches are built once as
tf.constant tensors before training; a custom @tf.function GradientTape step
loops over them.
Bottleneck: the dense/conv compute of the step (compute-bound).
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

LEN = 256
CH = 4
BATCH = 64
N_BATCHES = 24
STEPS = 200


def rig_batches(seed=86):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 8 * np.pi, LEN, dtype=np.float32)
    out = []
    for _ in range(N_BATCHES):
        stiff = rng.uniform(0.5, 1.5, (BATCH, 1)).astype(np.float32)
        joint = rng.uniform(0.0, 1.0, (BATCH, 1)).astype(np.float32)
        load = np.sin(t)[None, :] * 1300.0 / 1000.0 + rng.normal(0, 0.02, (BATCH, LEN))
        seat = load / stiff + 0.1 * joint * np.sin(2 * t)[None, :]
        back = 0.6 * load / stiff + rng.normal(0, 0.02, (BATCH, LEN))
        strain = joint * np.abs(load) + rng.normal(0, 0.02, (BATCH, LEN))
        x = np.stack([load, seat, back, strain], -1).astype(np.float32)
        cycles = (np.log10(200000.0) * stiff * (1.2 - joint)).astype(np.float32)
        out.append((tf.constant(x), tf.constant(cycles)))
    return out


def build_model():
    inp = keras.Input((LEN, CH))
    x = keras.layers.Conv1D(128, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x))


def train(get_batch):
    keras.utils.set_random_seed(86)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    batches = rig_batches()
    full, loss = train(lambda s: batches[s % N_BATCHES])
    emit({"steps_per_second": 1.0 / full})
    msg = f"[chairrig] full {full*1000:.1f} ms/step loss {loss:.4f}"
    if TRUTH:
        fx, fy = batches[0]
        compute, _ = train(lambda s: (fx, fy))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
