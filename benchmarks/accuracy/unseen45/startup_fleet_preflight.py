"""Delivery-fleet ML service preflight: before serving, import TensorFlow, list physical devices, build and compile the damage-photo CNN, telemetry LSTM and route MLP, and run one warm-up predict each. Nothing is trained; data is a few random warm-up tensors."""
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

t0 = time.perf_counter()
tmp = tempfile.mkdtemp(prefix="u45_startup_fleet_preflight_")
try:
    devs = tf.config.list_physical_devices()
    print_devs = [d.device_type for d in devs]
    models = {}
    inp = keras.Input((64, 64, 3))
    h = inp
    for f in (32, 64, 128, 256):
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.MaxPooling2D()(h)
    models["damage_cnn"] = keras.Model(inp, keras.layers.Dense(5)(keras.layers.GlobalAveragePooling2D()(h)))
    s = keras.Input((96, 24))
    models["telemetry_lstm"] = keras.Model(s, keras.layers.Dense(1)(keras.layers.LSTM(128)(keras.layers.LSTM(128, return_sequences=True)(s))))
    t = keras.Input((40,))
    hh = t
    for _ in range(6):
        hh = keras.layers.Dense(512, activation="relu")(hh)
    models["route_mlp"] = keras.Model(t, keras.layers.Dense(1)(hh))
    rng = np.random.default_rng(45)
    for name, m in models.items():
        m.compile("adam", "mse")
        x = rng.normal(size=(8,) + tuple(m.input_shape[1:])).astype(np.float32)
        m.predict(x, verbose=0)
    n = sum(m.count_params() for m in models.values())
    print(f"preflight ok devices={print_devs} models={len(models)} params={n} in {time.perf_counter()-t0:.1f}s")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
