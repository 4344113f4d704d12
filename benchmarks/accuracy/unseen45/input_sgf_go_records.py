"""Go game analytics: predict the winner from SGF game records. SGF strings are parsed in plain Python (property and move nodes) into 19x19 stone planes, batched with numpy and fed to a custom @tf.function GradientTape training loop."""
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

BATCH, STEPS, EPOCHS = 32, 250, 3
LET = "abcdefghijklmnopqrs"
rng = np.random.default_rng(45)


def make_sgf(r):
    mv = "".join(f";{'BW'[k % 2]}[{LET[r.integers(0,19)]}{LET[r.integers(0,19)]}]" for k in range(int(r.integers(80, 160))))
    return f"(;GM[1]FF[4]SZ[19]KM[6.5]RE[{'BW'[r.integers(0,2)]}+R]{mv})"


RECS = [make_sgf(rng) for _ in range(400)]


def parse_sgf(text):
    board = np.zeros((19, 19, 3), np.float32)
    props = text[2:text.index(";", 2)]
    res = props[props.index("RE[") + 3]
    for node in text[text.index(";", 2) + 1:-1].split(";"):
        c, col, row = node[0], LET.index(node[2]), LET.index(node[3])
        side = 0 if c == "B" else 1
        board[row, col, side] = 1.0
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
            rr, cc = row + dr, col + dc
            if 0 <= rr < 19 and 0 <= cc < 19 and board[rr, cc, 1 - side] > 0:
                board[row, col, 2] += 0.05
                board[rr, cc, 2] += 0.02
    return board, float(res == "B")


def get_batch(i):
    xs, ys = [], []
    for k in range(BATCH):
        b, y = parse_sgf(RECS[(i * BATCH + k) % len(RECS)])
        xs.append(b); ys.append(y)
    return np.stack(xs), np.asarray(ys, np.float32)[:, None]


def build():
    return keras.Sequential([keras.Input((19, 19, 3)), keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                             keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                             keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1)])


def run(getter):
    keras.utils.set_random_seed(45)
    return train_loop(build(), keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy(from_logits=True), getter, EPOCHS, STEPS)


tmp = tempfile.mkdtemp(prefix="u45_input_sgf_go_records_")
try:
    full = run(get_batch)
    emit({"steps_per_second": 1.0 / full})
    msg = f"sgf full {full*1000:.1f} ms/step"
    if TRUTH:
        fixed = get_batch(0)
        comp = run(lambda i: fixed)
        f = fraction(full, comp)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth {f:.2f}"
    print(msg)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
