"""Support-ticket routing: text_dataset_from_directory + TextVectorization adapted and applied inside the tf.data pipeline."""
import argparse, json, os, shutil, sys, tempfile, time
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records time between consecutive training batches within each epoch."""
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self._last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")

BATCH, STEPS, EPOCHS, VOCAB, SEQ = 64, 400, 2, 5000, 400
WORDS = [f"w{i}" for i in range(30000)] + ["refund", "login", "crash", "invoice", "password", "shipping"]


def write_tickets(root, per_class=300):
    rng = np.random.default_rng(0)
    for c in ("billing", "account", "bug", "delivery"):
        os.makedirs(os.path.join(root, c))
        for i in range(per_class):
            words = rng.choice(WORDS, int(rng.integers(1000, 3000)))
            with open(os.path.join(root, c, f"t{i:05d}.txt"), "w") as f:
                f.write("Ticket #%d: " % i + " ".join(words) + ". Thanks, Customer!")


def build_model():
    m = keras.Sequential([keras.Input((SEQ,), dtype="int64"), keras.layers.Embedding(VOCAB, 16),
                          keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(4)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u31_input_textdir_vectorize_tickets_")
    try:
        write_tickets(tmp)
        raw = keras.utils.text_dataset_from_directory(tmp, batch_size=BATCH, shuffle=True, seed=3)
        vec = keras.layers.TextVectorization(max_tokens=VOCAB, output_mode="int", output_sequence_length=SEQ,
                                             ngrams=None, standardize="lower_and_strip_punctuation")
        vec.adapt(raw.map(lambda x, y: x).take(5))
        ds = raw.map(lambda x, y: (vec(x), y)).repeat()
        t0 = time.perf_counter()
        timer = StepTimer(); build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step(); report("steps_per_second", 1.0 / full)
        msg = f"tickets: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
        if a.truth:
            batch = next(iter(ds))
            t2 = StepTimer(); build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step(); F = min(max((full - comp) / full, 0.0), 1.0)
            report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
