"""Sports: classify soccer possession outcome from player-tracking frames.

Data path: tf.data.Dataset.from_tensor_slices over raw tracking records
(one string per sequence: "frame|player:x,y,vx,vy|..." for 22 players over
6 frames), mapped with tf.numpy_function that parses the text and splats
players onto a 24x36 pitch heatmap per team with a Gaussian kernel; then
batch -> prefetch -> model.fit.
Bottleneck: the Python parser/heatmap builder inside tf.numpy_function (input).
"""
import time
WALL0 = time.perf_counter()
import json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, FRAMES, H, W = 32, 40, 2, 6, 24, 36
N_RECORDS = 600


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_records():
    rng = np.random.default_rng(59)
    recs, labels = [], []
    for _ in range(N_RECORDS):
        pos = rng.uniform([0, 0], [105, 68], (22, 2)); vel = rng.normal(0, 0.4, (22, 2))
        frames = []
        for f in range(FRAMES):
            pos = np.clip(pos + vel, 0, [105, 68]); vel += rng.normal(0, 0.05, (22, 2))
            frames.append("%d|" % f + "|".join("P%02d:%.2f,%.2f,%.3f,%.3f" % (p, *pos[p], *vel[p]) for p in range(22)))
        recs.append("\n".join(frames)); labels.append(int(pos[:11, 0].mean() > pos[11:, 0].mean()))
    return np.array(recs), np.array(labels, np.int32)


YY, XX = np.mgrid[0:H, 0:W].astype(np.float32)


def parse(rec):
    out = np.zeros((H, W, 2), np.float32)
    for line in rec.decode().split("\n"):
        for tok in line.split("|")[1:]:
            pid, vals = tok.split(":")
            x, y, vx, vy = (float(v) for v in vals.split(","))
            team = 0 if int(pid[1:]) < 11 else 1
            cx, cy = x / 105.0 * (W - 1), y / 68.0 * (H - 1)
            out[:, :, team] += np.exp(-((XX - cx) ** 2 + (YY - cy) ** 2) / 4.0) * (1.0 + abs(vx) + abs(vy))
    return out / FRAMES


def map_fn(rec, label):
    img = tf.numpy_function(parse, [rec], tf.float32)
    img.set_shape((H, W, 2))
    return img, label


def make_ds(recs, labels):
    return (tf.data.Dataset.from_tensor_slices((recs, labels)).repeat()
            .map(map_fn).batch(BATCH).prefetch(2))


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((H, W, 2)),
                          keras.layers.Conv2D(24, 3, activation="relu", padding="same"),
                          keras.layers.Conv2D(24, 3, activation="relu", padding="same"), keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(48, 3, activation="relu", padding="same"), keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(2)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    timer = StepTimer()
    build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    recs, labels = make_records()
    full = run(make_ds(recs, labels))
    emit({"steps_per_second": 1.0 / full})
    print("input_numpyfn_soccer_tracking: %.4f s/step (%.1f steps/s), wall %.1f s" % (full, 1 / full, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        batch = next(iter(make_ds(recs, labels)))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
