# Predicts a solubility-like score for small molecules. The molecules are kept as graphs
# (atom symbols + bond lists); a keras.utils.PyDataset with two worker threads computes a
# circular (Morgan/ECFP-style) fingerprint for each one in Python, by hashing every atom's
# neighbourhood for two rounds and folding the hashes into a 2048-bit vector.
import keras
import numpy as np
from truth import measure, timed_fit

BITS, RADIUS, BATCH = 2048, 3, 64
ELEMENTS = ["C", "C", "C", "C", "N", "O", "O", "S", "F", "Cl"]
CONTRIBUTION = {"C": 0.4, "N": -0.8, "O": -1.0, "S": 0.3, "F": 0.2, "Cl": 0.6}
rng = np.random.default_rng(0)


def random_molecule():
    n = int(rng.integers(30, 72))
    atoms = [ELEMENTS[i] for i in rng.integers(0, len(ELEMENTS), n)]
    bonds = [(i, int(rng.integers(0, i)), int(rng.choice([1, 1, 1, 2]))) for i in range(1, n)]
    for _ in range(int(rng.integers(0, 4))):  # ring closures
        a, b = sorted(rng.choice(n, 2, replace=False).tolist())
        if b - a > 4:
            bonds.append((a, b, 1))
    return atoms, bonds


molecules = [random_molecule() for _ in range(3000)]
scores = np.float32(
    [
        sum(CONTRIBUTION[a] for a in atoms) / 5 - 0.3 * sum(order == 2 for *_, order in bonds)
        for atoms, bonds in molecules
    ]
)


def fingerprint(atoms, bonds):
    neighbours = [[] for _ in atoms]
    for a, b, order in bonds:
        neighbours[a].append((order, b))
        neighbours[b].append((order, a))
    identifiers = [hash((symbol, len(neighbours[i]))) for i, symbol in enumerate(atoms)]
    bits = np.zeros(BITS, np.float32)
    for h in identifiers:
        bits[h % BITS] = 1.0
    for _ in range(RADIUS):
        updated = []
        for i, h in enumerate(identifiers):
            environment = sorted((order, identifiers[j]) for order, j in neighbours[i])
            updated.append(hash((h, tuple(environment))))
        identifiers = updated
        for h in identifiers:
            bits[h % BITS] += 1.0
    return np.minimum(bits, 4.0) / 4.0


class Molecules(keras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(workers=2, use_multiprocessing=False, **kwargs)
        self.order = np.random.default_rng(1).permutation(len(molecules))

    def __len__(self):
        return 100_000

    def __getitem__(self, index):
        start = (index * BATCH) % (len(molecules) - BATCH)
        chosen = self.order[start : start + BATCH]
        x = np.stack([fingerprint(*molecules[i]) for i in chosen])
        return x, scores[chosen]


model = keras.Sequential(
    [
        keras.Input((BITS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile(keras.optimizers.Adam(3e-4), "mse", metrics=["mae"])
model.fit(Molecules(), steps_per_epoch=3, verbose=0)
timed_fit(model, Molecules(), 400)
measure(model, Molecules, 30)
