"""Media/law: pre-flight check for a broadcaster's music rights-clearance service.
Before a scoring job is scheduled, this script imports TensorFlow, lists the visible devices,
builds and compiles the three models of the service (cue-sheet text matcher, territory licence
classifier, royalty-split regressor) and runs one smoke-test predict each on a tiny synthetic batch.
Nothing is trained."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

def cue_matcher():
    a = keras.Input((64,), dtype="int32"); b = keras.Input((64,), dtype="int32")
    emb = keras.layers.Embedding(20000, 128)
    enc = keras.Sequential([keras.layers.Conv1D(128, 5, activation="relu"), keras.layers.GlobalMaxPooling1D()])
    ea, eb = enc(emb(a)), enc(emb(b))
    x = keras.layers.Concatenate()([ea, eb, keras.layers.Multiply()([ea, eb])])
    out = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dense(128, activation="relu")(x))
    m = keras.Model([a, b], out); m.compile("adam", "binary_crossentropy", metrics=["AUC"]); return m

def territory_classifier():
    inp = keras.Input((40,))
    x = inp
    for w in (512, 512, 256):
        x = keras.layers.Dense(w, activation="relu")(keras.layers.BatchNormalization()(x))
    out = keras.layers.Dense(60, activation="sigmoid")(x)
    m = keras.Model(inp, out); m.compile("adam", "binary_crossentropy"); return m

def royalty_regressor():
    seq = keras.Input((30, 12))
    x = keras.layers.LSTM(64, return_sequences=True)(seq)
    x = keras.layers.LSTM(32)(x)
    out = keras.layers.Dense(8, activation="softmax", name="split")(x)
    m = keras.Model(seq, out); m.compile("adam", "kl_divergence"); return m

def main():
    tmp = tempfile.mkdtemp(prefix="u49_startup_rightsclearance_preflight_broadcaster_")
    try:
        devices = tf.config.list_physical_devices()
        rng = np.random.default_rng(49); keras.utils.set_random_seed(49)
        models = {"cue_matcher": cue_matcher(), "territory": territory_classifier(), "royalty": royalty_regressor()}
        inputs = {"cue_matcher": [rng.integers(0, 20000, (4, 64)), rng.integers(0, 20000, (4, 64))],
                  "territory": rng.normal(size=(4, 40)).astype(np.float32),
                  "royalty": rng.normal(size=(4, 30, 12)).astype(np.float32)}
        shapes = {}
        for name, m in models.items():
            shapes[name] = (m.count_params(), m.predict(inputs[name], verbose=0).shape)
        print("preflight ok in %.1fs: devices=%s %s" % (time.perf_counter() - t0, [d.device_type for d in devices], shapes))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
