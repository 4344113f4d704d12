"""Preflight check for a code-review bot's model stack before a nightly job.

Imports TensorFlow, inspects the visible devices, builds and compiles the three
models the bot uses (a char-CNN diff-hunk scorer, a BiGRU review-comment
classifier and a small attention reranker) and runs one predict on a dummy
batch with the hunk scorer. Nothing is trained; the only data are small
in-memory arrays.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
T0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

SEED = 53


def hunk_scorer():
    inp = keras.Input((512,), dtype="int32", name="diff_chars")
    x = keras.layers.Embedding(256, 32)(inp)
    for f in (64, 96, 128):
        x = keras.layers.Conv1D(f, 5, activation="relu", padding="same")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inp, out, name="hunk_scorer")


def comment_classifier():
    inp = keras.Input((96,), dtype="int32", name="comment_tokens")
    x = keras.layers.Embedding(12000, 64, mask_zero=True)(inp)
    x = keras.layers.Bidirectional(keras.layers.GRU(64))(x)
    out = keras.layers.Dense(7, activation="softmax")(x)
    return keras.Model(inp, out, name="comment_classifier")


def reranker():
    q = keras.Input((32,), dtype="int32", name="query")
    d = keras.Input((128,), dtype="int32", name="doc")
    emb = keras.layers.Embedding(12000, 64)
    qe, de = emb(q), emb(d)
    att = keras.layers.MultiHeadAttention(4, 16)(qe, de)
    x = keras.layers.Concatenate()([keras.layers.GlobalAveragePooling1D()(att),
                                    keras.layers.GlobalAveragePooling1D()(de)])
    out = keras.layers.Dense(1)(keras.layers.Dense(64, activation="relu")(x))
    return keras.Model([q, d], out, name="reranker")


def main():
    tmp = tempfile.mkdtemp(prefix="u53_startup_reviewbot_preflight_codecomments_")
    try:
        keras.utils.set_random_seed(SEED)
        devices = tf.config.list_physical_devices()
        logical = tf.config.list_logical_devices()
        rng = np.random.default_rng(SEED)
        params = 0
        m1 = hunk_scorer(); m1.compile("adam", "binary_crossentropy")
        m2 = comment_classifier(); m2.compile("adam", "sparse_categorical_crossentropy")
        m3 = reranker(); m3.compile("adam", "mse")
        p1 = m1.predict(rng.integers(0, 256, (8, 512)), verbose=0)
        shapes = [tuple(o.shape) for o in (m2.outputs[0], m3.outputs[0])]
        for m in (m1, m2, m3):
            params += m.count_params()
        with open(os.path.join(tmp, "preflight.json"), "w") as f:
            json.dump({"devices": [d.name for d in devices], "params": params}, f)
        print(f"startup_reviewbot_preflight_codecomments: {len(devices)} physical / {len(logical)} logical devices, "
              f"3 models, {params} params, scorer predict {p1.shape}, other heads {shapes}, "
              f"{time.perf_counter() - T0:.1f} s after import start")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
