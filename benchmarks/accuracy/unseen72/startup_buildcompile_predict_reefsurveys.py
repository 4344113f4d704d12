"""Coral-reef monitoring service start-up: no training.

Lists devices, builds and compiles three survey models (benthic cover CNN, fish count
regressor, reef soundscape classifier), runs one predict each on a dummy batch and writes
a small model-card JSON to a temp dir, then exits.
"""
import json, os, shutil, sys, tempfile, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def benthic_cover():
    return keras.Sequential([keras.Input((96, 96, 3)), keras.layers.Conv2D(16, 3, activation="relu"),
                             keras.layers.MaxPooling2D(2), keras.layers.Conv2D(32, 3, activation="relu"),
                             keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(6, activation="softmax")])


def fish_counts():
    inp = keras.Input((40,))
    h = keras.layers.Dense(128, activation="relu")(inp)
    h = keras.layers.Dense(64, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(12, activation="softplus")(h))


def soundscape():
    return keras.Sequential([keras.Input((128, 64)), keras.layers.Conv1D(32, 5, activation="relu"),
                             keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(4, activation="softmax")])


def main():
    tmp = tempfile.mkdtemp(prefix="u72_startup_buildcompile_predict_reefsurveys_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        card, rng = {"devices": devices, "models": {}}, np.random.default_rng(72)
        for name, fn, loss in (("benthic_cover", benthic_cover, "categorical_crossentropy"),
                               ("fish_counts", fish_counts, "poisson"),
                               ("soundscape", soundscape, "categorical_crossentropy")):
            keras.utils.set_random_seed(7)
            m = fn()
            m.compile(keras.optimizers.Adam(1e-3), loss)
            x = rng.normal(0, 1, (4,) + tuple(m.input_shape[1:])).astype(np.float32)
            p = m.predict(x, verbose=0)
            card["models"][name] = {"params": int(m.count_params()), "out": list(p.shape), "mean": float(p.mean())}
        with open(os.path.join(tmp, "model_card.json"), "w") as f:
            json.dump(card, f)
        print(f"reefsurveys startup: {len(devices)} devices, {len(card['models'])} models ready, wall {time.perf_counter() - T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
