"""Bird-call species classifier.

Clips are stored as in-memory WAV files (bytes). A tf.py_function inside
Dataset.map decodes each WAV with the stdlib `wave` module and turns it into a
log-power spectrogram with numpy, then a small CNN is trained with model.fit.
"""

import argparse
import io
import json
import os
import time
import wave

import keras
import numpy as np
import tensorflow as tf

SR = 8000
CLIP_SEC = 1.0
N_FFT = 256
HOP = 128
N_SPECIES = 6
N_CLIPS = 1500
BATCH = 24
EPOCHS = 4
STEPS_PER_EPOCH = 110

ACCURACY_OUT = os.environ.get("ACCURACY_OUT")


def render_call(species, rng):
    t = np.arange(int(SR * CLIP_SEC)) / SR
    f0 = 900 + 350 * species
    sweep = f0 * (1 + 0.3 * np.sin(2 * np.pi * (2 + species) * t))
    phase = 2 * np.pi * np.cumsum(sweep) / SR
    envelope = (np.sin(2 * np.pi * (3 + species % 3) * t) > 0.2).astype(np.float64)
    sig = 0.5 * envelope * np.sin(phase) + rng.normal(0, 0.15, size=t.shape)
    pcm = np.clip(sig * 32767, -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


WINDOW = np.hanning(N_FFT).astype(np.float32)


def decode_wav_to_spec(wav_bytes):
    with wave.open(io.BytesIO(wav_bytes.numpy()), "rb") as w:
        frames = w.readframes(w.getnframes())
    audio = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    audio = audio - audio.mean()
    # pre-emphasis + framing
    audio = np.append(audio[0], audio[1:] - 0.97 * audio[:-1])
    n_frames = 1 + (len(audio) - N_FFT) // HOP
    spec = np.empty((n_frames, N_FFT // 2 + 1), dtype=np.float32)
    for i in range(n_frames):
        seg = audio[i * HOP : i * HOP + N_FFT] * WINDOW
        spec[i] = np.abs(np.fft.rfft(seg)) ** 2
    spec = np.log(spec + 1e-6)
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return spec


N_FRAMES = 1 + (int(SR * CLIP_SEC) - N_FFT) // HOP
N_BINS = N_FFT // 2 + 1


def tf_decode(wav, label):
    spec = tf.py_function(decode_wav_to_spec, [wav], tf.float32)
    spec.set_shape((N_FRAMES, N_BINS))
    return spec[..., None], label


def make_ds(wavs, labels, seed):
    ds = tf.data.Dataset.from_tensor_slices((wavs, labels))
    ds = ds.shuffle(len(wavs), seed=seed).repeat()
    ds = ds.map(tf_decode)
    return ds.batch(BATCH)


def build_model():
    m = keras.Sequential(name="birdnet_tiny")
    m.add(keras.Input((N_FRAMES, N_BINS, 1)))
    m.add(keras.layers.Conv2D(16, (3, 5), strides=(1, 2), activation="relu"))
    m.add(keras.layers.MaxPooling2D((2, 2)))
    m.add(keras.layers.Conv2D(32, 3, activation="relu"))
    m.add(keras.layers.MaxPooling2D((2, 2)))
    m.add(keras.layers.Conv2D(32, 3, activation="relu"))
    m.add(keras.layers.GlobalMaxPooling2D())
    m.add(keras.layers.Dense(N_SPECIES, activation="softmax"))
    m.compile(
        keras.optimizers.RMSprop(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    return m


class Stamp(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def avg_step(times, warmup=5):
    return float(np.mean(np.diff(times[warmup:])))


def record(name, value):
    if ACCURACY_OUT:
        with open(ACCURACY_OUT, "a") as fh:
            fh.write(json.dumps({name: value}) + "\n")


def main(truth):
    rng = np.random.default_rng(42)
    labels = rng.integers(0, N_SPECIES, size=N_CLIPS).astype(np.int32)
    print(f"rendering {N_CLIPS} clips ...")
    wavs = [render_call(int(s), rng) for s in labels]
    print(f"spectrogram shape: {N_FRAMES}x{N_BINS}")

    model = build_model()
    csv_log = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"birdsong_{os.getpid()}.csv")
    start = time.perf_counter()
    model.fit(
        make_ds(wavs, labels, 0),
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        callbacks=[keras.callbacks.CSVLogger(csv_log)],
        verbose=2,
    )
    dur = time.perf_counter() - start
    total = EPOCHS * STEPS_PER_EPOCH
    print(f"training: {total} steps, {dur:.1f}s, {total / dur:.2f} steps/s")
    record("steps_per_second", total / dur)
    os.remove(csv_log)

    if truth:
        s_full = Stamp()
        model.fit(
            make_ds(wavs, labels, 1),
            epochs=EPOCHS,
            steps_per_epoch=STEPS_PER_EPOCH,
            verbose=0,
            callbacks=[s_full],
        )
        s_comp = Stamp()
        model.fit(
            make_ds(wavs, labels, 2).take(1).cache().repeat(),
            epochs=EPOCHS,
            steps_per_epoch=STEPS_PER_EPOCH,
            verbose=0,
            callbacks=[s_comp],
        )
        full, comp = avg_step(s_full.times), avg_step(s_comp.times)
        frac = max(0.0, min(1.0, (full - comp) / full))
        print(
            f"[truth] full={full * 1000:.1f}ms compute={comp * 1000:.1f}ms input_fraction={frac:.3f}"
        )
        record("truth_input_fraction", frac)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true", help="also measure input-wait ground truth")
    main(p.parse_args().truth)
