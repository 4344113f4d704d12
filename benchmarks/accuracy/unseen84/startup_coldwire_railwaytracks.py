import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

# Model-railway track timings: a club layout controller that, at power-on,
# checks which devices TensorFlow sees, builds its two lap-time models
# (a per-block sequence regressor and a camera-based points/turnout fault
# classifier),
# compiles them and makes a single warm-up prediction.  Nothing is trained
# and nothing is written.
BLOCKS = 48
SENSORS = 8


def block_time_model():
    inp = keras.Input((BLOCKS, SENSORS), name="block_timings")
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True))(x)
    x = keras.layers.Bidirectional(keras.layers.GRU(32))(x)
    out = keras.layers.Dense(BLOCKS, name="next_lap_block_seconds")(x)
    m = keras.Model(inp, out, name="lap_time_regressor")
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def turnout_fault_model():
    # the turnout camera model: a MobileNetV2 body on 96x96 crops of each
    # set of points, plus the flattened block timings
    cam = keras.Input((96, 96, 3), name="turnout_crop")
    body = keras.applications.MobileNetV2(input_shape=(96, 96, 3), include_top=False,
                                          weights=None, pooling="avg")
    flat = keras.Input((BLOCKS * SENSORS,), name="flat_timings")
    t = keras.layers.Dense(128, activation="relu")(flat)
    x = keras.layers.Concatenate()([body(cam), t])
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(12, activation="softmax", name="faulty_turnout")(x)
    m = keras.Model([cam, flat], out, name="turnout_fault_classifier")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    devices = tf.config.list_physical_devices()
    print("devices:", ", ".join(d.device_type + ":" + d.name.split(":")[-1] for d in devices))
    lap = block_time_model()
    fault = turnout_fault_model()
    rng = np.random.default_rng(71)
    crops = rng.random((4, 96, 96, 3)).astype(np.float32)
    loco_run = rng.gamma(4.0, 0.6, size=(4, BLOCKS * SENSORS)).astype(np.float32)
    pred = fault.predict([crops, loco_run], verbose=0)
    print(f"railwaytracks startup: {lap.count_params() + fault.count_params()} params, "
          f"warm-up turnout prediction argmax {int(pred.argmax(axis=1)[0])}, wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
