import time
_WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Podcast studio preflight: before a production session the tooling lists
# the visible devices, builds and compiles the three small models the studio
# uses (voice-activity CNN, loudness MLP, topic GRU), runs one predict on a
# dummy batch per model and writes a small JSON preflight report. It trains
# nothing and writes nothing to ACCURACY_OUT.
# ---------------------------------------------------------------------------
SEED = 60


def vad_cnn():
    inp = keras.Input((200, 40))
    h = keras.layers.Conv1D(32, 5, activation="relu")(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h), name="vad_cnn")


def loudness_mlp():
    inp = keras.Input((64,))
    h = keras.layers.Dense(64, activation="relu")(inp)
    return keras.Model(inp, keras.layers.Dense(1)(h), name="loudness_mlp")


def topic_gru():
    inp = keras.Input((50,), dtype="int32")
    h = keras.layers.Embedding(5000, 32)(inp)
    h = keras.layers.GRU(32)(h)
    return keras.Model(inp, keras.layers.Dense(12, activation="softmax")(h), name="topic_gru")


def main():
    parse_args()
    keras.utils.set_random_seed(SEED)
    t_import = time.perf_counter() - _WALL_T0
    report = {"devices": [d.name for d in tf.config.list_physical_devices()],
              "logical": [d.name for d in tf.config.list_logical_devices()],
              "tf": tf.__version__, "keras": keras.__version__, "models": {}}
    rng = np.random.default_rng(SEED)
    dummies = {"vad_cnn": rng.normal(size=(4, 200, 40)).astype("float32"),
               "loudness_mlp": rng.normal(size=(4, 64)).astype("float32"),
               "topic_gru": rng.integers(0, 5000, (4, 50)).astype("int32")}
    for build, loss in ((vad_cnn, "binary_crossentropy"), (loudness_mlp, "mse"),
                        (topic_gru, "sparse_categorical_crossentropy")):
        t = time.perf_counter()
        m = build()
        m.compile(optimizer="adam", loss=loss)
        out = m.predict(dummies[m.name], verbose=0)
        report["models"][m.name] = {"params": int(m.count_params()), "out_shape": list(out.shape),
                                    "seconds": round(time.perf_counter() - t, 3)}
    tmp = tempfile.mkdtemp(prefix="u60_startup_modelpreflight_podcaststudio_")
    try:
        with open(os.path.join(tmp, "preflight.json"), "w") as fh:
            json.dump(report, fh, indent=1)
        size = os.path.getsize(os.path.join(tmp, "preflight.json"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"[startup_modelpreflight_podcaststudio] {len(report['devices'])} devices, "
          f"{len(report['models'])} models checked "
          f"({', '.join('%s %.1fs' % (k, v['seconds']) for k, v in report['models'].items())}), report {size} bytes, "
          f"imports {t_import:.1f}s, wall {time.perf_counter() - _WALL_T0:.1f}s")


if __name__ == "__main__":
    main()
