"""Appellate outcome prediction from court ruling text.

Data path: a pool of synthetic ruling opinions generated from templates
(parties, statutes, reporter citations, holdings). A Python training loop
builds every batch by running citation and statute regexes over each
opinion, normalising reporter names, lower-casing and tokenising words,
and hashing unigrams/bigrams with zlib.crc32 into a 4096-slot bag of words
plus citation-count features; a tf.function GradientTape step trains the
classifier (affirmed / reversed / remanded).
Deliberate bottleneck: Python regex extraction and hashing per opinion.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, re, zlib
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 170
HASH = 4096
EXTRA = 16
POOL = 600

CITE = re.compile(r"(\d{1,4})\s+(U\.S\.|S\. ?Ct\.|F\.(?:2d|3d|4th)|F\. ?Supp\. ?(?:2d|3d)?)\s+(\d{1,5})(?:\s*\(([^)]*?)(\d{4})\))?")
STAT = re.compile(r"(\d+)\s+U\.S\.C\.\s+§+\s*(\d+[a-z]?)")
WORD = re.compile(r"[a-z][a-z']+")


def make_opinions(rng):
    reporters = ["U.S.", "S. Ct.", "F.2d", "F.3d", "F.4th", "F. Supp. 2d", "F. Supp. 3d"]
    courts = ["9th Cir. ", "2d Cir. ", "D.C. Cir. ", "S.D.N.Y. ", "N.D. Cal. ", ""]
    phrases = ["the district court erred in granting summary judgment",
               "we review de novo the question of qualified immunity",
               "the plaintiff failed to exhaust administrative remedies",
               "the agency action was arbitrary and capricious",
               "substantial evidence supports the findings below",
               "the search violated the fourth amendment",
               "harmless error does not warrant reversal",
               "we remand for further proceedings consistent with this opinion",
               "the statute of limitations bars the claim",
               "the contract is ambiguous as a matter of law"]
    docs, labels = [], []
    for i in range(POOL):
        outcome = int(rng.integers(0, 3))
        parts = [f"Appellant {rng.integers(1000)} v. Appellee {rng.integers(1000)}."]
        for _ in range(int(rng.integers(25, 45))):
            parts.append(str(rng.choice(phrases)).capitalize() + ".")
            if rng.random() < 0.5:
                parts.append(f"See {rng.integers(1, 999)} {rng.choice(reporters)} {rng.integers(1, 2000)} "
                             f"({rng.choice(courts)}{rng.integers(1950, 2025)}).")
            if rng.random() < 0.3:
                parts.append(f"Under {rng.choice([18, 28, 42, 5])} U.S.C. § {rng.integers(1, 2000)}, relief is limited.")
        parts.append(["AFFIRMED.", "REVERSED.", "VACATED and REMANDED."][outcome])
        docs.append(" ".join(parts))
        labels.append(outcome)
    return docs, np.asarray(labels, np.int32)


def featurize(doc):
    vec = np.zeros(HASH + EXTRA, np.float32)
    cites = CITE.findall(doc)
    stats = STAT.findall(doc)
    reporters = {}
    years = []
    for vol, rep, page, court, year in cites:
        key = rep.replace(" ", "")
        reporters[key] = reporters.get(key, 0) + 1
        if year:
            years.append(int(year))
        vec[zlib.crc32(("CITE_" + key + court.strip()).encode()) % HASH] += 1.0
    for title, sec in stats:
        vec[zlib.crc32(f"USC_{title}_{sec}".encode()) % HASH] += 1.0
    words = WORD.findall(doc.lower())
    for a, b in zip(words, words[1:]):
        vec[zlib.crc32(a.encode()) % HASH] += 1.0
        vec[zlib.crc32((a + " " + b).encode()) % HASH] += 0.5
    vec[:HASH] = np.log1p(vec[:HASH])
    vec[HASH:HASH + 8] = [len(cites) / 30, len(stats) / 15, len(words) / 1000, len(reporters) / 7,
                          (np.mean(years) - 1950) / 75 if years else 0.0, reporters.get("U.S.", 0) / 10,
                          reporters.get("F.3d", 0) / 10, doc.count("§") / 15]
    return vec


def build_model():
    return keras.Sequential([keras.Input((HASH + EXTRA,)),
                             keras.layers.Dense(768, activation="relu"),
                             keras.layers.Dense(384, activation="relu"),
                             keras.layers.Dense(3)])


def run(batches):
    """batches: callable step -> (x, y) numpy arrays."""
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    docs, labels = make_opinions(np.random.default_rng(62))
    rng = np.random.default_rng(1)
    order = rng.integers(0, POOL, size=(STEPS, BATCH))

    def from_text(step):
        idx = order[step]
        return np.stack([featurize(docs[i]) for i in idx]), labels[idx]

    full, loss = run(from_text)
    sps = 1.0 / full
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")
    msg = f"input_citationregex_tapeloop_courtrulings: {sps:.2f} steps/s ({full*1000:.1f} ms/step, loss {loss:.3f})"
    if args.truth:
        fixed = from_text(0)
        compute, _ = run(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
