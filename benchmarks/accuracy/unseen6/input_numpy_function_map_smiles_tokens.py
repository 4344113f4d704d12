"""Predicts a made-up solubility class from SMILES strings tokenised in a tf.numpy_function."""

import argparse
import re

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

MOLECULES, MAXLEN, BATCH, STEPS = 6000, 96, 64, 200
ATOMS = ["C", "c", "N", "n", "O", "o", "S", "F", "Cl", "Br", "[nH]", "[NH3+]", "[O-]", "P"]
BONDS = ["", "", "", "=", "#"]
TOKEN = re.compile(r"(\[[^\]]+\]|Br|Cl|[BCNOPSFIcnos]|\(|\)|=|#|@|\+|-|/|\\|%\d\d|\d)")
VOCAB = {t: i + 2 for i, t in enumerate(ATOMS + ["(", ")", "=", "#", "@", "/", "\\", "+", "-"])}
VOCAB.update({str(d): len(VOCAB) + 2 + d for d in range(10)})


def random_smiles(rng):
    out, rings, depth = [], 0, 0
    for _ in range(int(rng.integers(12, 48))):
        r = rng.random()
        if r < 0.12 and depth < 3:
            out.append("(")
            depth += 1
        elif r < 0.22 and depth:
            out.append(")")
            depth -= 1
        elif r < 0.27 and rings < 9:
            rings += 1
            out.append(str(rings))
        out.append(BONDS[rng.integers(len(BONDS))] + ATOMS[rng.integers(len(ATOMS))])
    return "".join(out) + ")" * depth


def make_molecules(seed=0):
    rng = np.random.default_rng(seed)
    return np.array([random_smiles(rng) for _ in range(MOLECULES)])


def featurise(smiles):
    tokens = TOKEN.findall(smiles.decode())
    ids = np.zeros(MAXLEN, np.int32)
    adjacency = {}
    stack, previous, open_rings, atom = [], -1, {}, -1
    degree = []
    for i, tok in enumerate(tokens[:MAXLEN]):
        ids[i] = VOCAB.get(tok, 1)
        if tok == "(":
            stack.append(previous)
        elif tok == ")":
            previous = stack.pop() if stack else previous
        elif tok.isdigit():
            if tok in open_rings:
                other = open_rings.pop(tok)
                adjacency.setdefault(previous, set()).add(other)
                adjacency.setdefault(other, set()).add(previous)
            else:
                open_rings[tok] = previous
        elif tok not in "=#@+-/\\":
            atom += 1
            degree.append(tok)
            if previous >= 0:
                adjacency.setdefault(previous, set()).add(atom)
                adjacency.setdefault(atom, set()).add(previous)
            previous = atom
    counts = [sum(1 for a in degree if a.lower().startswith(s)) for s in ("c", "n", "o", "s", "f")]
    halogens = sum(1 for a in degree if a in ("Cl", "Br", "F"))
    charged = sum(1 for a in degree if "+" in a or "-" in a)
    aromatic = sum(1 for a in degree if a.islower() or a == "[nH]")
    hist = np.bincount([min(len(v), 4) for v in adjacency.values()] or [0], minlength=5)[:5]
    # shortest paths from the first atom (breadth first) give a crude size measure
    seen, frontier, radius = {0}, [0], 0
    while frontier:
        nxt = [b for a in frontier for b in adjacency.get(a, ()) if b not in seen]
        seen.update(nxt)
        frontier = nxt
        radius += bool(nxt)
    desc = np.array(
        [len(degree), radius, len(adjacency), halogens, charged, aromatic, *counts, *hist],
        np.float32,
    )
    logp = 0.4 * counts[0] - 0.7 * counts[1] - 0.9 * counts[2] + 0.6 * halogens - 1.5 * charged
    return ids, desc / 10.0, np.int32(np.digitize(logp, [-2.0, 0.0, 2.0, 4.0]))


def molecules_dataset(smiles):
    def load(s):
        ids, desc, label = tf.numpy_function(featurise, [s], [tf.int32, tf.float32, tf.int32])
        ids.set_shape((MAXLEN,))
        desc.set_shape((16,))
        label.set_shape(())
        return (ids, desc), label

    return (
        tf.data.Dataset.from_tensor_slices(smiles)
        .shuffle(MOLECULES)
        .repeat()
        .map(load)
        .batch(BATCH)
        .prefetch(1)
    )


def build_model():
    ids = keras.Input((MAXLEN,), dtype="int32")
    desc = keras.Input((16,))
    h = keras.layers.Embedding(64, 32)(ids)
    for width in (48, 64, 96):
        h = keras.layers.Conv1D(width, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Concatenate()([h, keras.layers.Dense(64, activation="relu")(desc)])
    h = keras.layers.Dense(256, activation="relu")(h)
    model = keras.Model([ids, desc], keras.layers.Dense(5, activation="softmax")(h))
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    smiles = make_molecules()
    model = build_model()
    timed_fit(model, molecules_dataset(smiles), STEPS)
    measure(model, lambda: molecules_dataset(smiles), STEPS)
