"""Chess club results: predict game outcome from PGN text records. Each game is a PGN string (tag pairs plus SAN move text) parsed in a Python generator into per-side piece/square heatmaps, fed to model.fit via tf.data.Dataset.from_generator."""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

def train_loop(model, opt, loss_fn, get_batch, epochs, steps):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    gaps = []
    for e in range(epochs):
        last = None
        for s in range(steps):
            x, y = get_batch(e * steps + s)
            lv = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return float(np.mean(g))

FILES = "abcdefgh"
PIECES = "KQRBN"
BATCH, STEPS, EPOCHS = 64, 200, 3
rng = np.random.default_rng(45)


def make_game(r):
    toks = []
    for i in range(int(r.integers(60, 120))):
        if i % 2 == 0:
            toks.append(f"{i // 2 + 1}.")
        p = PIECES[r.integers(0, 5)] if r.random() < 0.6 else ""
        cap = "x" if r.random() < 0.2 else ""
        toks.append(f"{p}{cap}{FILES[r.integers(0, 8)]}{r.integers(1, 9)}{'+' if r.random() < 0.1 else ''}")
    res = ["1-0", "0-1", "1/2-1/2"][r.integers(0, 3)]
    hdr = f'[Event "Club"]\n[WhiteElo "{r.integers(1200, 2600)}"]\n[BlackElo "{r.integers(1200, 2600)}"]\n[Result "{res}"]\n\n'
    return hdr + " ".join(toks) + " " + res


GAMES = [make_game(rng) for _ in range(600)]


def parse_pgn(text):
    heat = np.zeros((2, 6, 64), np.float32)
    head, moves = text.split("\n\n", 1)
    tags = dict(l[1:-1].split(" ", 1) for l in head.splitlines())
    we, be = int(tags["WhiteElo"].strip('"')), int(tags["BlackElo"].strip('"'))
    side = 0
    for tok in moves.split():
        if tok.endswith(".") or tok in ("1-0", "0-1", "1/2-1/2"):
            continue
        t = tok.rstrip("+#")
        kind = PIECES.index(t[0]) + 1 if t[0] in PIECES else 0
        sq = FILES.index(t[-2]) * 8 + int(t[-1]) - 1
        heat[side, kind, sq] += 1.0 + ("x" in t)
        side ^= 1
    feat = np.concatenate([heat.ravel() / 10.0, [(we - be) / 400.0]]).astype(np.float32)
    label = {"1-0": 0, "0-1": 1, "1/2-1/2": 2}[tags["Result"].strip('"')]
    return feat, label


def gen():
    i = 0
    while True:
        yield parse_pgn(GAMES[i % len(GAMES)])
        i += 1


DIM = 2 * 6 * 64 + 1


def build():
    m = keras.Sequential([keras.Input((DIM,)), keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(3)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(45)
    m, timer = build(), StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix="u45_input_pgn_chess_outcome_")
try:
    ds = tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec((DIM,), tf.float32), tf.TensorSpec((), tf.int32))).batch(BATCH)
    full = run(ds)
    emit({"steps_per_second": 1.0 / full})
    msg = f"pgn full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = next(iter(ds))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
