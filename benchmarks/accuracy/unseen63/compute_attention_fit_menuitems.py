"""Restaurant menus: classify menu items into cuisines with a small transformer.

Input path: menu item descriptions are tokenized once up front into an int32
matrix; tf.data.from_tensor_slices -> shuffle -> repeat -> batch -> prefetch
feeds model.fit, so the input side is trivial.
Deliberate bottleneck: compute - two self-attention blocks over 32 tokens.
"""
import time
T0 = time.perf_counter()
import argparse, json, os
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 32
STEPS = 30
EPOCHS = 3
SEQ = 32
VOCAB = 6000
N_CUISINES = 16
N_ITEMS = 20000
D = 64


def make_menu(seed=63):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CUISINES, size=N_ITEMS).astype(np.int32)
    base = rng.integers(1, VOCAB, size=(N_CUISINES, 200))
    toks = np.where(rng.random((N_ITEMS, SEQ)) < 0.5,
                    base[y[:, None], rng.integers(0, 200, size=(N_ITEMS, SEQ))],
                    rng.integers(1, VOCAB, size=(N_ITEMS, SEQ))).astype(np.int32)
    return toks, y


def block(x):
    a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(x, x)
    x = keras.layers.LayerNormalization()(x + a)
    f = keras.layers.Dense(4 * D, activation="gelu")(x)
    f = keras.layers.Dense(D)(f)
    return keras.layers.LayerNormalization()(x + f)


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, D)(inp)
    x = block(block(x))
    x = keras.layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, keras.layers.Dense(N_CUISINES)(x))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(d) + "\n")


def run(ds, label):
    keras.utils.set_random_seed(63)
    model = build_model()
    timer = StepTimer()
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    sps = timer.sec_per_step()
    print(f"[{label}] {EPOCHS}x{STEPS} steps in {time.perf_counter() - t:.1f}s, "
          f"{sps * 1000:.1f} ms/step, {1 / sps:.1f} steps/s, wall {time.perf_counter() - T0:.1f}s", flush=True)
    return sps


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    toks, y = make_menu()
    ds = (tf.data.Dataset.from_tensor_slices((toks, y)).shuffle(4096, seed=63).repeat()
          .batch(BATCH).prefetch(2))
    full = run(ds, "attention")
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = (toks[:BATCH], y[:BATCH])
        comp = run(tf.data.Dataset.from_tensors(batch).repeat(), "one-batch")
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        print(f"truth_input_fraction={f:.3f} (full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
