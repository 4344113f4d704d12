"""Bird-call species classifier from field-recorder WAV clips.

Clips are written as 16-bit mono WAV files.  The pipeline is
Dataset.from_tensor_slices(paths) -> map(tf.io.read_file, tf.audio.decode_wav,
tf.signal.stft, mel projection, log) -> batch, with a plain serial map, and it
feeds model.fit.
"""
import argparse
import json
import os
import shutil
import tempfile
import time
import wave

import numpy as np
import tensorflow as tf
import keras

SR = 16000
CLIP_S = 2.0
N_CLIPS = 300
N_SPECIES = 8
N_MELS = 64
FRAME = 1024
HOP = 128
BATCH = 16
STEPS_PER_EPOCH = 80
EPOCHS = 3


def write_clips(folder, rng):
    paths, labels = [], []
    t = np.arange(int(SR * CLIP_S)) / SR
    for i in range(N_CLIPS):
        sp = int(rng.integers(0, N_SPECIES))
        f0 = 1500 + 400 * sp
        chirp = np.sin(2 * np.pi * (f0 + 300 * np.sin(2 * np.pi * (3 + sp) * t)) * t)
        env = (np.sin(2 * np.pi * (1 + sp % 3) * t) > 0).astype(np.float64)
        sig = 0.4 * chirp * env + 0.1 * rng.normal(size=t.shape)
        pcm = np.clip(sig * 32767, -32768, 32767).astype(np.int16)
        path = os.path.join(folder, f"clip_{i:05d}_sp{sp}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SR)
            w.writeframes(pcm.tobytes())
        paths.append(path)
        labels.append(sp)
    return paths, np.array(labels, dtype=np.int32)


MEL = tf.signal.linear_to_mel_weight_matrix(N_MELS, FRAME // 2 + 1, SR, 200.0, 7600.0)


def load_clip(path, label):
    audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
    audio = audio[:, 0]
    spec = tf.abs(tf.signal.stft(audio, frame_length=FRAME, frame_step=HOP, fft_length=FRAME))
    mel = tf.math.log(tf.matmul(tf.square(spec), MEL) + 1e-6)
    mel = (mel - tf.reduce_mean(mel)) / (tf.math.reduce_std(mel) + 1e-6)
    return mel[..., None], label


def make_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths), seed=0).repeat()
    return ds.map(load_clip).batch(BATCH)


def build_model(input_shape):
    inp = keras.Input(input_shape)
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu", padding="same")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, activation="relu", padding="same")(x)
    x = keras.layers.Conv2D(64, 3, strides=2, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_SPECIES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def train(ds, input_shape):
    model = build_model(input_shape)
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
                     callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    tmp = tempfile.mkdtemp(prefix="u30_birdsong_")
    try:
        paths, labels = write_clips(tmp, np.random.default_rng(0))
        shape = load_clip(paths[0], labels[0])[0].shape
        full, loss = train(make_dataset(paths, labels), shape)
        emit({"steps_per_second": 1.0 / full})
        msg = f"birdsong: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}"
        if args.truth:
            batch = next(iter(make_dataset(paths, labels)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), shape)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
        print(msg + f", wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
