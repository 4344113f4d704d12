# Guesses the key of folk tunes written in ABC notation. A plain Python generator makes the
# tunes as text, tokenises each one (notes, accidentals, octave marks, note lengths, bars),
# transposes it into a random key, and turns it into a pitch-class sequence plus duration-
# weighted pitch-class and interval histograms. model.fit reads the generator directly.
import argparse
import random

import keras
import numpy as np
from truth import measure, timed_fit

STEPS = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
MAJOR = [0, 2, 4, 5, 7, 9, 11]
LENGTH, BATCH, KEYS = 128, 64, 12


def write_tune(rnd, key):
    """A random tune in ``key`` (0-11, major), as an ABC body."""
    notes, bar = [], 0.0
    degree = 0
    for _ in range(rnd.randrange(130, 200)):
        degree = max(-7, min(14, degree + rnd.choice([-2, -1, -1, 1, 1, 2, 0, 3, -3, 4])))
        pitch = key + MAJOR[degree % 7] + 12 * (degree // 7)
        name = "CCDDEFFGGAAB"[pitch % 12]
        sharp = "^" if pitch % 12 in (1, 3, 6, 8, 10) else ""
        octave = pitch // 12
        text = sharp + (name.lower() if octave >= 1 else name) + "'" * max(0, octave - 1)
        length = rnd.choice(["", "", "2", "/2", "3/2", "4"])
        notes.append(text + length)
        bar += {"": 1, "2": 2, "/2": 0.5, "3/2": 1.5, "4": 4}[length]
        if bar >= 4:
            notes.append("|")
            bar = 0.0
    return " ".join(notes) + " |]"


def tokenise(body):
    tokens, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch in " |]":
            i += 1
            continue
        accidental = 0
        while body[i] in "^_=":
            accidental += {"^": 1, "_": -1, "=": 0}[body[i]]
            i += 1
        letter = body[i]
        pitch = STEPS[letter.upper()] + accidental + (12 if letter.islower() else 0)
        i += 1
        while i < len(body) and body[i] in "',":
            pitch += 12 if body[i] == "'" else -12
            i += 1
        number = ""
        while i < len(body) and (body[i].isdigit() or body[i] == "/"):
            number += body[i]
            i += 1
        if not number:
            duration = 1.0
        elif number.startswith("/"):
            duration = 1.0 / float(number[1:] or 2)
        elif "/" in number:
            top, bottom = number.split("/")
            duration = float(top) / float(bottom)
        else:
            duration = float(number)
        tokens.append((pitch, duration))
    return tokens


def features(tokens, shift):
    sequence = np.zeros((LENGTH, 14), np.float32)
    histogram = [0.0] * 12
    intervals = [0.0] * 25
    previous = None
    for t, (pitch, duration) in enumerate(tokens):
        pitch += shift
        histogram[pitch % 12] += duration
        if previous is not None:
            intervals[max(-12, min(12, pitch - previous)) + 12] += 1
        previous = pitch
        if t < LENGTH:
            sequence[t, pitch % 12] = 1.0
            sequence[t, 12] = duration / 4
            sequence[t, 13] = (pitch - 24) / 24
    total = sum(histogram)
    summary = np.array([h / total for h in histogram] + [i / len(tokens) for i in intervals])
    return sequence, summary.astype(np.float32)


def tunes(seed=0):
    rnd = random.Random(seed)
    while True:
        seqs, summaries, keys = [], [], []
        for _ in range(BATCH):
            key = rnd.randrange(KEYS)
            shift = rnd.randrange(-5, 7)
            tokens = tokenise(write_tune(rnd, key))
            sequence, summary = features(tokens, shift)
            seqs.append(sequence)
            summaries.append(summary)
            keys.append((key + shift) % 12)
        yield (np.stack(seqs), np.stack(summaries)), np.array(keys)


def build_model():
    notes = keras.Input((LENGTH, 14))
    summary = keras.Input((37,))
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(notes)
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    s = keras.layers.Dense(64, activation="relu")(summary)
    h = keras.layers.Concatenate()([h, s])
    h = keras.layers.Dense(128, activation="relu")(h)
    model = keras.Model([notes, summary], keras.layers.Dense(KEYS)(h))
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    model = build_model()
    model.fit(tunes(1), steps_per_epoch=3, verbose=0)
    timed_fit(model, tunes(), 150)
    measure(model, tunes, 150)
