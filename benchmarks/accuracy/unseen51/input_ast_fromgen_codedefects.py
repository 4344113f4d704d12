"""Code-review defect prediction: a repository of small Python modules is written to a
temp folder, and each training example is one module read from disk, parsed with the
`ast` module and turned into node-type counts, depth and name-hash features inside a
Python generator wrapped by tf.data.Dataset.from_generator, which feeds model.fit.
"""
import ast
import json
import os
import shutil
import sys
import tempfile
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 150
EPOCHS = 2
N_FILES = 1200
NODE_TYPES = [n for n in dir(ast) if isinstance(getattr(ast, n), type) and issubclass(getattr(ast, n), ast.AST)][:96]
NODE_INDEX = {n: i for i, n in enumerate(NODE_TYPES)}
HASH_DIM = 64
FEAT = len(NODE_TYPES) + HASH_DIM + 4


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
        return sum(g) / len(g)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_module(rng, idx):
    lines = ["import os", "import math", ""]
    buggy = rng.random() < 0.4
    for f in range(rng.integers(1, 4)):
        args = ", ".join(f"a{k}" for k in range(rng.integers(1, 5)))
        lines.append(f"def func_{idx}_{f}({args}):")
        lines.append("    total = 0")
        for s in range(rng.integers(2, 6)):
            kind = rng.integers(0, 5)
            if kind == 0:
                lines.append(f"    for i in range({rng.integers(2, 50)}):")
                lines.append(f"        total += i * {rng.integers(1, 9)}")
            elif kind == 1:
                lines.append(f"    if total > {rng.integers(0, 100)}:")
                lines.append("        total = math.sqrt(total)")
                lines.append("    else:")
                lines.append(f"        total -= {rng.integers(1, 5)}")
            elif kind == 2:
                lines.append(f"    data = [x ** 2 for x in range({rng.integers(3, 30)}) if x % 2]")
                lines.append("    total += sum(data)")
            elif kind == 3:
                lines.append("    try:")
                lines.append(f"        total /= {rng.integers(0, 3)}")
                lines.append("    except ZeroDivisionError:" if not buggy or rng.random() < 0.5 else "    except:")
                lines.append("        pass")
            else:
                lines.append(f"    name = os.path.join('dir', str({rng.integers(0, 999)}))")
                lines.append("    total += len(name)")
        lines.append("    return total")
        lines.append("")
    return "\n".join(lines), float(buggy)


def featurize(src):
    tree = ast.parse(src)
    vec = np.zeros(FEAT, np.float32)
    max_depth = 0
    stack = [(tree, 0)]
    n_nodes = 0
    while stack:
        node, d = stack.pop()
        n_nodes += 1
        max_depth = max(max_depth, d)
        i = NODE_INDEX.get(type(node).__name__)
        if i is not None:
            vec[i] += 1.0
        if isinstance(node, ast.Name):
            vec[len(NODE_TYPES) + zlib.crc32(node.id.encode()) % HASH_DIM] += 1.0
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            vec[-4] += 1.0
        for child in ast.iter_child_nodes(node):
            stack.append((child, d + 1))
    vec[-3] = max_depth
    vec[-2] = n_nodes / 100.0
    vec[-1] = src.count("\n") / 100.0
    return np.log1p(vec)


def build_model():
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_ast_fromgen_codedefects_")
    try:
        rng = np.random.default_rng(51)
        labels = {}
        for i in range(N_FILES):
            src, y = make_module(rng, i)
            p = os.path.join(tmp, f"mod_{i:05d}.py")
            with open(p, "w") as fh:
                fh.write(src)
            labels[p] = y
        paths = sorted(labels)

        def gen():
            order = np.random.default_rng(7)
            while True:
                for j in order.permutation(len(paths)):
                    with open(paths[j]) as fh:
                        src = fh.read()
                    yield featurize(src), np.float32(labels[paths[j]])

        sig = (tf.TensorSpec((FEAT,), tf.float32), tf.TensorSpec((), tf.float32))
        ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)

        tf.random.set_seed(51)
        model = build_model()
        timer = StepTimer()
        t0 = time.perf_counter()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})

        if "--truth" in sys.argv:
            xb, yb = next(iter(ds.take(1)))
            tf.random.set_seed(51)
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        print(f"ast code-defect model: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, "
              f"final loss {hist.history['loss'][-1]:.4f}, fit {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
