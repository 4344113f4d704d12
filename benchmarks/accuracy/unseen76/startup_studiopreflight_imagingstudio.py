"""Conservation imaging-studio preflight (startup-only, trains nothing).

Lists the visible devices, builds and compiles three small models used by
the studio (colour-checker regression, UV-fluorescence histogram classifier,
spectral unmixer), runs one predict on each to confirm they execute, and
writes a small JSON preflight report to a temporary folder that is then
removed.  Writes nothing to ACCURACY_OUT.  Deliberate cost: framework
import and model construction (startup-bound).
"""
import os, sys, json, time, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return mean_after_warmup(self.gaps)


def report_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")


def colour_checker_model():
    inp = keras.Input((24, 3))
    x = keras.layers.Flatten()(inp)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(9)(x)
    return keras.Model(inp, out, name="colour_checker")


def uv_tile_model():
    inp = keras.Input((32, 3))  # per-tile UV fluorescence colour histogram
    x = keras.layers.Flatten()(inp)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    return keras.Model(inp, out, name="uv_tiles")


def unmixer_model():
    inp = keras.Input((256,))
    x = keras.layers.Dense(128, activation="relu")(inp)
    out = keras.layers.Dense(8, activation="softmax")(x)
    return keras.Model(inp, out, name="spectral_unmixer")


def main():
    tmp = tempfile.mkdtemp(prefix="u76_startup_studiopreflight_imagingstudio_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        rng = np.random.default_rng(76)
        report = {"devices": devices, "models": {}}
        for builder, shape in ((colour_checker_model, (4, 24, 3)),
                               (uv_tile_model, (4, 32, 3)),
                               (unmixer_model, (4, 256))):
            m = builder()
            m.compile(optimizer="adam", loss="mse")
            pred = m.predict(rng.random(shape).astype(np.float32), verbose=0)
            report["models"][m.name] = {"params": int(m.count_params()),
                                        "out_shape": list(pred.shape)}
        with open(os.path.join(tmp, "preflight.json"), "w") as fh:
            json.dump(report, fh, indent=1)
        print(f"imagingstudio preflight: {len(devices)} device(s), "
              f"{len(report['models'])} models ok, wall {time.perf_counter()-WALL0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
