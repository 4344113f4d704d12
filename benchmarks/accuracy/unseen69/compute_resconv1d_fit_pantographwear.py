"""Railway pantograph carbon-strip wear regression from contact-force traces.

Input path: pre-decoded float32 contact-force / uplift / current windows held
in memory -> tf.data.Dataset.from_tensor_slices -> batch -> cache -> repeat ->
prefetch. The model (a deep residual dilated 1-D CNN) dominates the step.
Feeds model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse, json, os
import numpy as np
import tensorflow as tf
import keras

N = 1024
LEN = 256
CH = 3
WIDTH = 48
BLOCKS = 4
BATCH = 16
STEPS = 25
EPOCHS = 3


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_data(seed=69):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, LEN, dtype=np.float32)
    wear = rng.uniform(0, 1, (N, 1)).astype(np.float32)
    force = 0.5 + 0.2 * np.sin(2 * np.pi * (5 + 10 * wear) * t) + rng.normal(0, 0.05, (N, LEN))
    uplift = np.cumsum(rng.normal(0, 0.01, (N, LEN)), axis=1) + 0.1 * wear
    arcs = (rng.random((N, LEN)) < 0.002 * (1 + 5 * wear)).astype(np.float32)
    x = np.stack([force, uplift, arcs], -1).astype(np.float32)
    return x, wear


def build_model():
    inp = keras.Input((LEN, CH))
    x = keras.layers.Conv1D(WIDTH, 7, padding="same")(inp)
    for b in range(BLOCKS):
        h = keras.layers.Conv1D(WIDTH, 5, padding="same", dilation_rate=2 ** (b % 3), activation="relu")(x)
        h = keras.layers.Conv1D(WIDTH, 5, padding="same")(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
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
    x, y = make_data()
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=69).batch(BATCH, drop_remainder=True)
          .cache().repeat().prefetch(2))
    timer = StepTimer(); model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[resconv1d_fit] full {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-_T0:.1f}s")
    if args.truth:
        tds = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        t2 = StepTimer(); m2 = build_model()
        m2.fit(tds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step()
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"[resconv1d_fit] truth compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, wall {time.perf_counter()-_T0:.1f}s")


if __name__ == "__main__":
    main()
