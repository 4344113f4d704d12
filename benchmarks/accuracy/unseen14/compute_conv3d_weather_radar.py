"""Precipitation nowcasting: predict the next radar frame from a short reflectivity sequence."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SEQ = 600
FRAMES = 8
H = W = 64
BATCH_SIZE = 4
STEPS = 80
SEED = 13


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def synth_radar(rng):
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    seqs = np.zeros((N_SEQ, FRAMES + 1, H, W, 1), dtype=np.float32)
    for i in range(N_SEQ):
        cy, cx = rng.uniform(10, 54, 2)
        vy, vx = rng.uniform(-2, 2, 2)
        r = rng.uniform(5, 14)
        for t in range(FRAMES + 1):
            d2 = (yy - cy - vy * t) ** 2 + (xx - cx - vx * t) ** 2
            seqs[i, t, :, :, 0] = np.exp(-d2 / (2 * r * r))
    seqs += rng.normal(0, 0.02, seqs.shape).astype(np.float32)
    return seqs[:, :FRAMES], seqs[:, FRAMES]


def build_model():
    inp = keras.Input(shape=(FRAMES, H, W, 1))
    x = keras.layers.Conv3D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv3D(16, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling3D((1, 2, 2))(x)
    x = keras.layers.Conv3D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv3D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv3D(32, (FRAMES, 1, 1), padding="valid", activation="relu")(x)
    x = keras.layers.Reshape((H // 2, W // 2, 32))(x)
    x = keras.layers.UpSampling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    x, y = synth_radar(rng)
    print(f"radar sequences {x.shape}, targets {y.shape}")

    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=1,
        steps_per_epoch=args.steps,
        shuffle=True,
        callbacks=[clock],
        verbose=0,
    )
    full = clock.seconds_per_step()
    print(
        f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
        f"mae={hist.history['mae'][-1]:.4f}"
    )
    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        batch = (x[:BATCH_SIZE], y[:BATCH_SIZE])
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        clock2 = StepClock()
        model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
        compute = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
    print(f"radar conv3d: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
