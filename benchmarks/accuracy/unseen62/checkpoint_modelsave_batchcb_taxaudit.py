"""Tax-return audit selection model with an over-eager checkpoint policy.

Data path: in-memory tax-return features (income bands, deduction ratios,
schedule flags, filing-history counts) -> tf.data slices -> model.fit.
A custom callback writes a full .keras archive (weights + optimizer state)
with model.save after every batch, plus a separate .weights.h5 via
save_weights, into a temp dir, keeping only the two newest of each.
Deliberate bottleneck: checkpoint saves.
"""
import time
T0 = time.perf_counter()
import argparse, json, os, shutil, tempfile
import numpy as np
import tensorflow as tf
import keras

BATCH = 16
STEPS = 65
EPOCHS = 2
FEAT = 120
EVERY = 1


class SaveAndTime(keras.callbacks.Callback):
    """Times steps and saves; the clock restarts after each save."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.gaps, self.last, self.save_s, self.saves = folder, [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if batch % EVERY == 0:
            path = os.path.join(self.folder, f"audit_{self.saves % 2}.keras")
            self.model.save(path)
            self.model.save_weights(os.path.join(self.folder, f"audit_{self.saves % 2}.weights.h5"))
            self.saves += 1
            after = time.perf_counter()
            self.save_s += after - now
            now = after
        self.last = now

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def make_data(rng, n):
    x = rng.normal(size=(n, FEAT)).astype(np.float32)
    y = (x[:, :6].sum(axis=1) + rng.normal(size=n) > 1.5).astype(np.float32)
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)), keras.layers.Dense(1536, activation="relu"),
                          keras.layers.Dense(1536, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(ds, folder):
    keras.utils.set_random_seed(0)
    model = build_model()
    cb = SaveAndTime(folder)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return cb.sec_per_step(), cb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u62_checkpoint_modelsave_batchcb_taxaudit_")
    try:
        x, y = make_data(np.random.default_rng(62), BATCH * STEPS)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
        full, cb = run(ds, tmp)
        save_s, saves = cb.save_s, cb.saves
        sps = 1.0 / full
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": sps}) + "\n")
        msg = f"checkpoint_modelsave_batchcb_taxaudit: {sps:.2f} steps/s ({full*1000:.1f} ms/step)"
        if args.truth:
            batch = next(iter(ds))
            compute, cb2 = run(tf.data.Dataset.from_tensors(batch).repeat(), tmp)
            save_s += cb2.save_s
            saves += cb2.saves
            frac = min(max((full - compute) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", compute-only {compute*1000:.1f} ms/step, truth input fraction {frac:.3f}"
        wall = time.perf_counter() - T0
        print(msg + f", {saves} saves took {save_s:.1f}s = {100*save_s/wall:.0f}% of wall {wall:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
