"""Pharmacy: drug-toxicity classifier trained with a custom tf.GradientTape loop
fed from Python. Every batch parses MDL SDF molblocks (counts line, atom and bond
blocks, data items) and computes hashed circular (Morgan-like) fingerprints in
pure Python. Deliberate bottleneck: input."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, NBITS = 64, 100, 1024
ELEMS = ["C", "C", "C", "C", "N", "O", "O", "S", "F", "Cl"]


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_sdf(n, seed=66):
    rng = np.random.default_rng(seed)
    mols = []
    for i in range(n):
        na = int(rng.integers(18, 40))
        el = [ELEMS[k] for k in rng.integers(0, len(ELEMS), na)]
        xyz = rng.normal(0, 2.5, (na, 3)).tolist()
        bonds = [(a, a + 1, int(rng.choice([1, 1, 1, 2]))) for a in range(na - 1)]
        for _ in range(na // 4):
            a, b = sorted(rng.choice(na, 2, replace=False))
            bonds.append((int(a), int(b), 1))
        tox = int(el.count("Cl") + el.count("S") + sum(1 for b in bonds if b[2] == 2) // 4 >= 3)
        out = [f"MOL{i:06d}", "  SYNTH   3D", "", f"{na:3d}{len(bonds):3d}  0  0  0  0  0  0  0  0999 V2000"]
        for (x, y, z), e in zip(xyz, el):
            out.append(f"{x:10.4f}{y:10.4f}{z:10.4f} {e:<3s} 0  0  0  0  0  0  0  0  0  0  0  0")
        for a, b, o in bonds:
            out.append(f"{a+1:3d}{b+1:3d}{o:3d}  0")
        out += ["M  END", "> <TOXIC>", str(tox), "", "> <MW>", f"{rng.uniform(150,600):.2f}", "", "$$$$"]
        mols.append("\n".join(out))
    return mols


def parse_molblock(block):
    lines = block.split("\n")
    na, nb = int(lines[3][0:3]), int(lines[3][3:6])
    elems, coords = [], []
    for line in lines[4:4 + na]:
        coords.append((float(line[0:10]), float(line[10:20]), float(line[20:30])))
        elems.append(line[31:34].strip())
    nbrs = [[] for _ in range(na)]
    for line in lines[4 + na:4 + na + nb]:
        a, b, o = int(line[0:3]) - 1, int(line[3:6]) - 1, int(line[6:9])
        nbrs[a].append((b, o)); nbrs[b].append((a, o))
    data, i = {}, 4 + na + nb
    while i < len(lines):
        if lines[i].startswith("> <"):
            data[lines[i][3:-1]] = lines[i + 1]; i += 2
        else:
            i += 1
    # Morgan-like circular fingerprint, radius 2
    fp = np.zeros(NBITS, np.float32)
    ids = [hash((e, len(nbrs[k]))) & 0xFFFFFFF for k, e in enumerate(elems)]
    for rad in range(3):
        for k in range(na):
            fp[ids[k] % NBITS] = 1.0
        new = []
        for k in range(na):
            env = sorted((ids[j], o) for j, o in nbrs[k])
            new.append(hash((ids[k], tuple(env))) & 0xFFFFFFF)
        ids = new
    # radius of gyration as extra descriptor
    cx = sum(c[0] for c in coords) / na; cy = sum(c[1] for c in coords) / na; cz = sum(c[2] for c in coords) / na
    rg = (sum((c[0]-cx)**2 + (c[1]-cy)**2 + (c[2]-cz)**2 for c in coords) / na) ** 0.5
    fp[0] = rg / 5.0; fp[1] = float(data["MW"]) / 600.0
    return fp, np.float32(int(data["TOXIC"]))


def build_model():
    return keras.Sequential([keras.Input((NBITS,)), keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])


def run(batch_fn):
    keras.utils.set_random_seed(66)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, tf.squeeze(model(x, training=True), -1))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for s in range(STEPS):
        x, y = batch_fn(s)
        loss = float(step(tf.constant(x), tf.constant(y)))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps)), loss


def main():
    os.environ["PYTHONHASHSEED"] = "0"
    mols = make_sdf(BATCH * STEPS)
    def full_batch(s):
        xs, ys = zip(*[parse_molblock(m) for m in mols[s * BATCH:(s + 1) * BATCH]])
        return np.stack(xs), np.array(ys, np.float32)
    full, loss = run(full_batch)
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_tapeloopsdf_drugtoxicity] full {full*1000:.1f} ms/step loss {loss:.3f}"
    if TRUTH:
        fixed = full_batch(0)
        comp, _ = run(lambda s: fixed)
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
