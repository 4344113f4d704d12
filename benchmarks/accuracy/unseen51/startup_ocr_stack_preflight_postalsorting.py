"""Pre-flight check for a postal sorting line's OCR stack: before the shift starts, the
service imports TensorFlow, lists the visible devices, builds and compiles the three
models it serves (address-block detector CNN, BiLSTM line reader, ZIP-region classifier)
and runs one warm-up predict on a blank batch each. No data is read and nothing trains.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras


def detector():
    inp = keras.Input((128, 256, 1))
    x = inp
    for f in (16, 32, 64, 96):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    out = keras.layers.Conv2D(5, 1, name="boxes")(x)
    m = keras.Model(inp, out, name="address_block_detector")
    m.compile(optimizer="adam", loss="mse")
    return m


def line_reader():
    inp = keras.Input((32, 256, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D((2, 2))(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D((2, 2))(x)
    x = keras.layers.Permute((2, 1, 3))(x)
    x = keras.layers.Reshape((64, 8 * 64))(x)
    x = keras.layers.Bidirectional(keras.layers.LSTM(128, return_sequences=True))(x)
    x = keras.layers.Bidirectional(keras.layers.LSTM(96, return_sequences=True))(x)
    out = keras.layers.Dense(64, activation="softmax")(x)
    m = keras.Model(inp, out, name="line_reader")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def zip_classifier():
    tokens = keras.Input((24,), dtype="int32")
    x = keras.layers.Embedding(5000, 64)(tokens)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(900, activation="softmax")(x)
    m = keras.Model(tokens, out, name="zip_region")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    devices = tf.config.list_physical_devices()
    print("devices:", [d.device_type + ":" + d.name.split(":")[-1] for d in devices])
    print("built with cuda:", tf.test.is_built_with_cuda(), "threads:",
          tf.config.threading.get_inter_op_parallelism_threads(),
          tf.config.threading.get_intra_op_parallelism_threads())
    keras.utils.set_random_seed(51)
    models = [detector(), line_reader(), zip_classifier()]
    blanks = [np.zeros((4, 128, 256, 1), np.float32), np.zeros((4, 32, 256, 1), np.float32),
              np.zeros((4, 24), np.int32)]
    params = 0
    for m, b in zip(models, blanks):
        out = m.predict(b, verbose=0)
        params += m.count_params()
        print(f"  {m.name}: {m.count_params():,} params, warm-up output {tuple(out.shape)}")
    print(f"ocr stack preflight ok: {len(models)} models, {params:,} params, "
          f"{time.perf_counter() - T0:.1f}s since start")


if __name__ == "__main__":
    main()
