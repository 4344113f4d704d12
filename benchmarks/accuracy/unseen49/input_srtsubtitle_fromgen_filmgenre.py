"""Media: genre tagging of films from their subtitle tracks.
Synthetic .srt subtitle files are written to a temp folder; a Python generator behind
tf.data.Dataset.from_generator opens each file, parses the SRT cue blocks (index, timecodes,
text), and builds hashed bag-of-words plus dialogue-timing features for a Keras MLP (model.fit)."""
import os, sys, time, json, re, zlib, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_FILES, CUES, DIM, GENRES = 32, 100, 4, 320, 110, 2048, 6
WORDS = [w + str(i) for i in range(60) for w in ("love", "gun", "ship", "laugh", "ghost", "ball", "court", "song")]
TC = re.compile(r"(\d\d):(\d\d):(\d\d),(\d\d\d) --> (\d\d):(\d\d):(\d\d),(\d\d\d)")

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
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def fmt(t):
    ms = int(t * 1000); h, ms = divmod(ms, 3600000); m, ms = divmod(ms, 60000); s, ms = divmod(ms, 1000)
    return "%02d:%02d:%02d,%03d" % (h, m, s, ms)

def write_srt(folder, rng):
    labels = []
    for i in range(N_FILES):
        g = int(rng.integers(GENRES)); labels.append(g)
        t = 0.0; blocks = []
        for c in range(CUES):
            t += float(rng.exponential(2.0 + g * 0.5)); d = float(rng.uniform(0.8, 4.0))
            n = int(rng.integers(3, 12))
            words = [WORDS[(int(rng.integers(60)) * 8 + (g if rng.random() < 0.4 else int(rng.integers(8)))) % len(WORDS)] for _ in range(n)]
            blocks.append("%d\n%s --> %s\n%s\n" % (c + 1, fmt(t), fmt(t + d), " ".join(words)))
            t += d
        with open(os.path.join(folder, "film_%04d.srt" % i), "w", encoding="utf-8") as f:
            f.write("\n".join(blocks))
    return np.array(labels, np.int32)

def parse_srt(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    vec = np.zeros(DIM, np.float32); durs = []; gaps = []; prev_end = 0.0
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        m = TC.match(lines[1])
        v = [int(x) for x in m.groups()]
        start = v[0] * 3600 + v[1] * 60 + v[2] + v[3] / 1000.0
        end = v[4] * 3600 + v[5] * 60 + v[6] + v[7] / 1000.0
        durs.append(end - start); gaps.append(start - prev_end); prev_end = end
        for line in lines[2:]:
            for w in re.findall(r"[a-z]+\d*", line.lower()):
                vec[zlib.crc32(w.encode()) % DIM] += 1.0
    vec /= max(vec.sum(), 1.0)
    timing = np.array([np.mean(durs), np.std(durs), np.mean(gaps), np.std(gaps)], np.float32) / 5.0
    return np.concatenate([vec, timing])

def build_model():
    inp = keras.Input((DIM + 4,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(GENRES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_srtsubtitle_fromgen_filmgenre_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49)
        labels = write_srt(tmp, rng)
        paths = [os.path.join(tmp, "film_%04d.srt" % i) for i in range(N_FILES)]

        def gen():
            order = np.random.default_rng(7).permutation(N_FILES)
            k = 0
            while True:
                i = order[k % N_FILES]; k += 1
                yield parse_srt(paths[i]), labels[i]

        sig = (tf.TensorSpec((DIM + 4,), tf.float32), tf.TensorSpec((), tf.int32))
        ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)
        model = build_model(); timer = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "srt genre: %.4f s/step" % full
        if truth:
            batch = next(iter(ds))
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
