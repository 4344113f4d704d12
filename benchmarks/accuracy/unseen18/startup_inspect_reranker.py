"""Quick sanity check of the environment and the search re-ranking model before a training job."""

import platform
import time

import numpy as np
import tensorflow as tf
import keras

QUERY_LEN = 32
DOC_LEN = 256
VOCAB = 200000
EMBED = 128


def build_reranker():
    query = keras.Input(shape=(QUERY_LEN,), dtype="int32", name="query")
    doc = keras.Input(shape=(DOC_LEN,), dtype="int32", name="doc")
    embed = keras.layers.Embedding(VOCAB, EMBED, name="shared_embedding")
    q = embed(query)
    d = embed(doc)
    q = keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True))(q)
    d = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(d)
    attn = keras.layers.Attention()([q, d])
    x = keras.layers.Concatenate()(
        [keras.layers.GlobalMaxPooling1D()(attn), keras.layers.GlobalAveragePooling1D()(d)]
    )
    x = keras.layers.Dense(256, activation="relu")(x)
    score = keras.layers.Dense(1, name="score")(x)
    return keras.Model({"query": query, "doc": doc}, score, name="reranker")


def main():
    t0 = time.perf_counter()
    print(
        f"python {platform.python_version()}, tensorflow {tf.__version__}, keras {keras.__version__}"
    )
    print("built with CUDA:", tf.test.is_built_with_cuda())
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    print("intra-op threads:", tf.config.threading.get_intra_op_parallelism_threads())

    model = build_reranker()
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    model.summary()

    rng = np.random.default_rng(0)
    sample = {
        "query": rng.integers(1, VOCAB, size=(64, QUERY_LEN)).astype(np.int32),
        "doc": rng.integers(1, VOCAB, size=(64, DOC_LEN)).astype(np.int32),
    }
    scores = model.predict(sample, batch_size=32, verbose=0)
    print("first scores:", np.round(scores[:8, 0], 4))
    print(f"sanity check finished in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
