"""Customer-message intent routing for a telecom contact centre with frequent weight dumps.

Tokenised chat messages (hashed word ids) are synthesised in memory and fed
through tf.data; the intent model has a large 120k-row word embedding, and an
operations requirement to be able to resume within seconds means a callback
writes the full model (weights plus optimizer state) with model.save(...keras)
after every training batch.
"""
import os, sys, json, time, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, EVERY = 128, 40, 2, 1
VOCAB, SEQ, NINT = 120000, 48, 20


class StepTimerWithSaves(keras.callbacks.Callback):
    """Times steps and writes weights every EVERY batches; the save is bracketed out of the gaps."""
    def __init__(self, folder):
        super().__init__(); self.folder = folder; self.gaps = []; self.last = None
        self.save_seconds = 0.0; self.saves = 0
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None; self.epoch = epoch
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        if (batch + 1) % EVERY == 0:
            self.model.save(os.path.join(self.folder, "intent_router_latest.keras"))
            self.saves += 1
            self.save_seconds += time.perf_counter() - t
        self.last = time.perf_counter()
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_data(rng, n):
    y = rng.integers(0, NINT, n).astype(np.int32)
    x = (rng.zipf(1.2, (n, SEQ)) % VOCAB).astype(np.int32)
    x[:, :4] = (y[:, None] * 1000 + rng.integers(0, 50, (n, 4))) % VOCAB
    return x, y


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 96)(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(NINT, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(39)
    keras.utils.set_random_seed(39)
    tmp = tempfile.mkdtemp(prefix="u39_checkpoint_kerassave_intent_router_")
    try:
        t0 = time.perf_counter()
        x, y = make_data(rng, 20000)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(20000, seed=39).repeat().batch(BATCH)
        model = build_model()
        st = StepTimerWithSaves(tmp)
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[st], verbose=0)
        full = st.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = (f"checkpoint_kerassave_intent_router: {1.0/full:.1f} steps/s, {st.saves} saves "
               f"took {st.save_seconds:.1f}s of {time.perf_counter()-t0:.1f}s")
        if truth:
            batch = next(iter(ds))
            m2 = build_model()
            st2 = StepTimerWithSaves(tmp)
            m2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=STEPS, callbacks=[st2], verbose=0)
            comp = st2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
