"""Retail basket model smoke check: import TF, list devices, build a model, predict a few baskets. No training."""
import time
t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras


def main():
    print("TF", tf.__version__, "Keras", keras.__version__)
    for d in tf.config.list_physical_devices():
        print("device:", d.device_type, d.name)
    print("logical:", [d.name for d in tf.config.list_logical_devices()])
    items = keras.Input((20,), dtype="int32", name="items")
    store = keras.Input((8,), name="store")
    e = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(50000, 64)(items))
    h = keras.layers.Dense(256, activation="relu")(keras.layers.Concatenate()([e, store]))
    model = keras.Model([items, store], keras.layers.Dense(1, activation="sigmoid")(h))
    model.summary()
    rng = np.random.default_rng(0)
    p = model.predict([rng.integers(0, 50000, (8, 20)).astype(np.int32), rng.normal(size=(8, 8)).astype(np.float32)], verbose=0)
    print(f"retail startup check: predicted {p.shape[0]} baskets, total {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
