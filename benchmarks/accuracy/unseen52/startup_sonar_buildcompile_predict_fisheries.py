"""Pre-flight check for a fisheries echosounder classification service.
The script imports TensorFlow, lists the visible devices, builds and compiles the three models the
service uses (echogram CNN, ping-sequence GRU, school-shape MLP) on synthetic input shapes and runs
one predict each; nothing is trained and no data is read from disk."""
import os, sys, json, time, struct, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each batch end; gaps only within an epoch."""
    def on_train_begin(self, logs=None):
        self.gaps = []
        self.t = None
    def on_epoch_begin(self, epoch, logs=None):
        self.t = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.t is not None:
            self.gaps.append(now - self.t)
        self.t = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

NAME = "startup_sonar_buildcompile_predict_fisheries"
t0 = time.perf_counter()
tmp = tempfile.mkdtemp(prefix="u52_%s_" % NAME)
try:
    devs = tf.config.list_physical_devices()
    rng = np.random.default_rng(0)
    keras.utils.set_random_seed(0)
    cnn = keras.Sequential([keras.Input((128, 96, 3))] + [l for f in (32, 64, 128, 192) for l in (
        keras.layers.Conv2D(f, 3, padding="same", activation="relu"), keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(2))] + [keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(8)])
    gru = keras.Sequential([keras.Input((200, 16)), keras.layers.GRU(96, return_sequences=True),
                            keras.layers.GRU(96), keras.layers.Dense(8)])
    mlp = keras.Sequential([keras.Input((24,)), keras.layers.Dense(256, activation="relu"),
                            keras.layers.Dense(256, activation="relu"), keras.layers.Dense(8)])
    params = 0
    for m, shape in ((cnn, (4, 128, 96, 3)), (gru, (4, 200, 16)), (mlp, (4, 24))):
        m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        m.predict(rng.standard_normal(shape).astype(np.float32), verbose=0)
        params += m.count_params()
    print("%s: devices=%d models=3 params=%d wall=%.1fs" % (NAME, len(devs), params, time.perf_counter() - t0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
