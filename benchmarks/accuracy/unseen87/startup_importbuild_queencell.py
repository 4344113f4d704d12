import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

# Queen-cell inspection notes: an apiary app starts up, checks which devices
# TensorFlow sees, adapts the note vocabulary on 20,000 inspection notes,
# builds and compiles the three models it would serve (a text model over
# free-text notes such as "3 capped swarm cells on bottom bars, queen seen,
# eggs present", a small tabular model over the inspection checklist and a
# CNN that tells swarm cells from supersedure and emergency cells in 160x160
# frame photos) and runs one prediction with each to warm them.  Nothing is
# trained and nothing is written to ACCURACY_OUT.

VOCAB = 4000
SEQ = 48
CHECKLIST = 20
FRAME = 160


def build_note_model():
    tokens = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 64)(tokens)
    h = keras.layers.Conv1D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(4, activation="softmax", name="swarm_risk")(h)
    model = keras.Model(tokens, out, name="queencell_notes")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def build_frame_model():
    frames = keras.Input((FRAME, FRAME, 3))
    h = frames
    for width in (32, 64, 128, 192):
        h = keras.layers.Conv2D(width, 3, padding="same", activation="relu")(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(3, activation="softmax", name="cell_type")(h)
    model = keras.Model(frames, out, name="queencell_photo")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def build_checklist_model():
    model = keras.Sequential([
        keras.Input((CHECKLIST,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ], name="queencell_checklist")
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


devices = tf.config.list_physical_devices()
print("[queencell] devices:", [d.device_type for d in devices])
t_import = time.perf_counter() - T0

WORDS = ["queen", "seen", "eggs", "larvae", "capped", "swarm", "supersedure",
         "emergency", "cells", "cell", "bottom", "bars", "face", "frame", "brood",
         "pattern", "spotty", "solid", "drones", "honey", "pollen", "stores",
         "calm", "defensive", "queenless", "roar", "cup", "charged", "marked",
         "unmarked", "split", "added", "super", "box", "two", "three", "no"]
rng = np.random.default_rng(87)
corpus = [" ".join(rng.choice(WORDS, int(rng.integers(6, 30)))) for _ in range(20000)]
vectorizer = keras.layers.TextVectorization(max_tokens=VOCAB,
                                            output_sequence_length=SEQ)
vectorizer.adapt(tf.data.Dataset.from_tensor_slices(corpus).batch(256))
notes = build_note_model()
checklist = build_checklist_model()
risk = notes.predict(vectorizer(corpus[:8]), verbose=0)
flags = checklist.predict(rng.random((8, CHECKLIST)).astype(np.float32), verbose=0)
photo = build_frame_model()
cells = photo.predict(rng.random((192, FRAME, FRAME, 3)).astype(np.float32),
                      batch_size=32, verbose=0)
print(f"[queencell] import+devices {t_import:.1f} s, models "
      f"{notes.count_params() + checklist.count_params() + photo.count_params()} params, "
      f"risk {risk.shape}, flags {flags.shape}, cells {cells.shape}, "
      f"wall {time.perf_counter() - T0:.1f} s")
