# Predicts whether a protein is membrane-bound from its amino-acid sequence. A
# keras.utils.PyDataset with two worker processes turns each sequence into hand-made
# descriptors in Python: residue composition, dipeptide frequencies, a Kyte-Doolittle
# hydropathy profile over a sliding window, and counts of candidate transmembrane helices.
import keras
import numpy as np
from truth import measure, timed_fit

AMINO = "ACDEFGHIKLMNPQRSTVWY"
INDEX = {a: i for i, a in enumerate(AMINO)}
HYDROPATHY = dict(
    zip(
        AMINO,
        [
            1.8,
            2.5,
            -3.5,
            -3.5,
            2.8,
            -0.4,
            -3.2,
            4.5,
            -3.9,
            3.8,
            1.9,
            -3.5,
            -1.6,
            -3.5,
            -4.5,
            -0.8,
            -0.7,
            4.2,
            -0.9,
            -1.3,
        ],
        strict=False,
    )
)
WINDOW, PROFILE, BATCH = 19, 64, 64
FEATURES = 20 + 400 + PROFILE + 4


def random_protein(rnd):
    length = int(rnd.integers(300, 700))
    membrane = rnd.random() < 0.5
    letters = list(rnd.choice(list(AMINO), length))
    if membrane:  # a few hydrophobic stretches (transmembrane helices)
        for _ in range(int(rnd.integers(1, 7))):
            start = int(rnd.integers(0, length - 22))
            letters[start : start + 21] = rnd.choice(list("AILMFVW"), 21)
    return "".join(letters), float(membrane)


def descriptors(sequence):
    n = len(sequence)
    composition = [0.0] * 20
    dipeptides = [0.0] * 400
    previous = None
    for residue in sequence:
        i = INDEX[residue]
        composition[i] += 1
        if previous is not None:
            dipeptides[previous * 20 + i] += 1
        previous = i
    values = [HYDROPATHY[r] for r in sequence]
    profile = []
    for start in range(n - WINDOW + 1):
        profile.append(sum(values[start : start + WINDOW]) / WINDOW)
    helices, inside = 0, False
    for h in profile:
        if h > 1.6 and not inside:
            helices, inside = helices + 1, True
        elif h < 1.0:
            inside = False
    resampled = np.interp(
        np.linspace(0, len(profile) - 1, PROFILE), np.arange(len(profile)), profile
    )
    extra = [n / 400, helices / 5, max(profile) / 4, sum(values) / n / 4]
    return np.concatenate(
        [np.array(composition) / n, np.array(dipeptides) * 20 / n, resampled / 4, extra]
    ).astype(np.float32)


class Proteins(keras.utils.PyDataset):
    def __init__(self, sequences, labels, **kwargs):
        super().__init__(workers=2, use_multiprocessing=True, **kwargs)
        self.sequences, self.labels = sequences, labels

    def __len__(self):
        return len(self.sequences) // BATCH

    def __getitem__(self, index):
        chosen = range(index * BATCH, (index + 1) * BATCH)
        x = np.stack([descriptors(self.sequences[i]) for i in chosen])
        return x, self.labels[list(chosen)]


def build_model():
    model = keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(1024, activation="gelu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(1024, activation="gelu"),
            keras.layers.Dense(512, activation="gelu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(keras.optimizers.Adam(3e-4), "binary_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    rnd = np.random.default_rng(0)
    proteins = [random_protein(rnd) for _ in range(12800)]
    sequences = [s for s, _ in proteins]
    labels = np.float32([m for _, m in proteins])
    model = build_model()
    model.fit(Proteins(sequences[:640], labels[:640]), steps_per_epoch=3, verbose=0)
    timed_fit(model, Proteins(sequences, labels), 200)
    measure(model, lambda: Proteins(sequences, labels), 200)
