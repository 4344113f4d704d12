"""Sanity check for the keyword-spotting model before launching a training job."""

import platform
import sys
import time

import numpy as np

import tensorflow as tf
import keras

SAMPLE_RATE = 16000
N_MELS = 40
N_FRAMES = 98
KEYWORDS = [
    "yes",
    "no",
    "up",
    "down",
    "left",
    "right",
    "on",
    "off",
    "stop",
    "go",
    "_unknown_",
    "_silence_",
]


def describe_environment():
    print("python      ", sys.version.split()[0], platform.machine())
    print("tensorflow  ", tf.__version__, "| keras", keras.__version__, "| numpy", np.__version__)
    print("built w/cuda", tf.test.is_built_with_cuda())
    for dev in tf.config.list_physical_devices():
        print("device      ", dev.device_type, dev.name)
    print("logical cpus", len(tf.config.list_logical_devices("CPU")))
    print(
        "threads      intra",
        tf.config.threading.get_intra_op_parallelism_threads(),
        "inter",
        tf.config.threading.get_inter_op_parallelism_threads(),
    )


def log_mel_frontend():
    waveform = keras.Input(shape=(SAMPLE_RATE,), name="waveform")
    stft = keras.layers.STFTSpectrogram(
        mode="log", frame_length=400, frame_step=160, fft_length=512
    )(waveform[..., None])
    return waveform, stft


def build_model(width=96):
    inputs = keras.Input(shape=(N_FRAMES, N_MELS, 1), name="log_mel")
    x = keras.layers.Conv2D(64, (5, 3), padding="same", activation="relu")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 1, activation="relu")(x)
    x = keras.layers.MaxPooling2D((2, 2))(x)
    for _ in range(3):
        x = keras.layers.DepthwiseConv2D(3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(width, 1, activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    outputs = keras.layers.Dense(len(KEYWORDS), activation="softmax")(x)
    return keras.Model(inputs, outputs, name="ds_cnn_kws")


def fake_log_mels(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(-4, 1.5, size=(n, N_FRAMES, N_MELS, 1)).astype("float32")


def main():
    t0 = time.perf_counter()
    describe_environment()

    waveform, spec = log_mel_frontend()
    frontend = keras.Model(waveform, spec, name="stft_frontend")
    audio = np.random.default_rng(1).normal(0, 0.1, size=(2, SAMPLE_RATE)).astype("float32")
    print("frontend output", frontend.predict(audio, verbose=0).shape)

    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.summary()
    print(f"parameters: {model.count_params():,}")

    probs = model.predict(fake_log_mels(8), batch_size=4, verbose=0)
    for i, p in enumerate(probs[:4]):
        print(f"clip {i}: top keyword {KEYWORDS[int(np.argmax(p))]!r} p={p.max():.3f}")
    loss, acc = model.evaluate(
        fake_log_mels(32, 2), np.zeros(32, "int32"), batch_size=16, verbose=0
    )
    print(f"untrained loss {loss:.3f} acc {acc:.3f}")

    for width in (64, 128, 192):
        candidate = build_model(width)
        t1 = time.perf_counter()
        candidate.predict(fake_log_mels(64, width), batch_size=32, verbose=0)
        print(
            f"width {width:3d}: {candidate.count_params():>8,} params, 2 batches in {time.perf_counter() - t1:.2f}s"
        )
    print(f"sanity check finished in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
