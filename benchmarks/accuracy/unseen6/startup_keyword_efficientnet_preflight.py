"""Pre-flight check for the keyword-spotting job: environment, model build, config export."""

import json
import os
import platform
import tempfile

import keras
import tensorflow as tf

KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
CLASSES = KEYWORDS + ["_silence_", "_unknown_"]

print("python", platform.python_version(), "on", platform.machine(), platform.system())
print("tensorflow", tf.__version__, "keras", keras.__version__, "backend", keras.backend.backend())
build = tf.sysconfig.get_build_info()
print("built with cuda:", build.get("is_cuda_build"), "cudnn:", build.get("cudnn_version"))
print("physical devices:", [d.name for d in tf.config.list_physical_devices()])
print("gpus:", tf.config.list_physical_devices("GPU") or "none, training will use the CPU")
print(
    "threads: intra",
    tf.config.threading.get_intra_op_parallelism_threads(),
    "inter",
    tf.config.threading.get_inter_op_parallelism_threads(),
    "cpus",
    os.cpu_count(),
)
print("floatx", keras.config.floatx(), "policy", keras.mixed_precision.global_policy().name)
keras.utils.set_random_seed(1234)

spectrogram = keras.Input((98, 64, 1), name="log_mel")
h = keras.layers.Normalization(axis=None, mean=-6.0, variance=9.0)(spectrogram)
h = keras.layers.Resizing(128, 128)(h)
backbone = keras.applications.EfficientNetV2B0(
    include_top=False, weights=None, input_shape=(128, 128, 1), pooling="avg"
)
h = keras.layers.Dropout(0.2)(backbone(h))
outputs = keras.layers.Dense(len(CLASSES), activation="softmax", name="keyword")(h)
model = keras.Model(spectrogram, outputs, name="keyword_spotter")
schedule = keras.optimizers.schedules.PiecewiseConstantDecay([2000, 6000], [1e-3, 3e-4, 1e-4])
model.compile(
    keras.optimizers.AdamW(schedule, weight_decay=1e-4),
    keras.losses.SparseCategoricalCrossentropy(),
    metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=3, name="top3")],
)
model.summary(line_length=100, expand_nested=False)
print("weights:", model.count_params(), "layers in backbone:", len(backbone.layers))

with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "keyword_spotter.json"), "w") as fh:
        fh.write(model.to_json(indent=1))
    with open(os.path.join(folder, "labels.json"), "w") as fh:
        json.dump({"classes": CLASSES, "sample_rate": 16000, "frames": 98, "mels": 64}, fh)
    print("config written:", sorted(os.listdir(folder)))
print("pre-flight done")
