"""Protein family classifier: variable-length sequences, serial feature map, tf.data bucket_by_sequence_length."""
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

BATCH, STEPS, EPOCHS, N = 32, 200, 2, 4000


def featurize(seq, label):
    # serial map: one-hot residues plus a rolling hydrophobicity profile per residue
    oh = tf.one_hot(seq, 21)
    prof = tf.signal.frame(tf.pad(tf.cast(seq, tf.float32), [[0, 255]]), 256, 1)
    stats = tf.stack([tf.reduce_mean(prof, 1), tf.math.reduce_std(prof, 1), tf.reduce_max(prof, 1)], 1)
    spec = tf.abs(tf.signal.rfft(prof))[:, :8]
    return tf.concat([oh, stats / 20.0, tf.math.log1p(spec)], 1), label


def build_model():
    m = keras.Sequential([keras.Input((None, 32)), keras.layers.Conv1D(32, 5, padding="same", activation="relu"),
                          keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(6)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true"); a = ap.parse_args()
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, 21, int(rng.integers(50, 1200))).astype(np.int32) for _ in range(N)]
    labels = rng.integers(0, 6, N).astype(np.int32)
    ds = tf.data.Dataset.from_generator(lambda: zip(seqs, labels), output_signature=(
        tf.TensorSpec([None], tf.int32), tf.TensorSpec([], tf.int32))).cache()
    ds = ds.shuffle(1000, seed=1).repeat().map(featurize)
    ds = ds.bucket_by_sequence_length(lambda x, y: tf.shape(x)[0], bucket_boundaries=[200, 400, 800],
                                      bucket_batch_sizes=[BATCH] * 4)
    t0 = time.perf_counter()
    timer = StepTimer(); build_model().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step(); report("steps_per_second", 1.0 / full)
    msg = f"proteins: {1/full:.2f} steps/s, wall {time.perf_counter()-t0:.1f}s"
    if a.truth:
        batch = next(iter(ds))
        t2 = StepTimer(); build_model().fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[t2], verbose=0)
        comp = t2.sec_per_step(); F = min(max((full - comp) / full, 0.0), 1.0)
        report("truth_input_fraction", F); msg += f", truth_input_fraction {F:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
