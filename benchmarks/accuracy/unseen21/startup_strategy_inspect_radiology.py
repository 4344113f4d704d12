"""Environment sanity check before launching chest X-ray training jobs."""

import argparse
import platform
import time

t_start = time.perf_counter()
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--image-size", type=int, default=160)
args, _ = parser.parse_known_args()

print(
    "python",
    platform.python_version(),
    "| tensorflow",
    tf.__version__,
    "| keras",
    keras.__version__,
)
for key, value in sorted(tf.sysconfig.get_build_info().items()):
    print(f"  build {key}: {value}")
print("physical devices:", tf.config.list_physical_devices())
print("logical devices:", tf.config.list_logical_devices())
print("gpu available:", bool(tf.config.list_physical_devices("GPU")))

strategy = tf.distribute.MirroredStrategy()
print("strategy:", type(strategy).__name__, "replicas:", strategy.num_replicas_in_sync)

with strategy.scope():
    backbone = keras.applications.DenseNet121(
        include_top=False, weights=None, input_shape=(args.image_size, args.image_size, 3)
    )
    inputs = keras.Input((args.image_size, args.image_size, 3))
    x = backbone(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(14, activation="sigmoid", name="findings")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-4),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(multi_label=True, num_labels=14)],
    )
model.summary(line_length=100, expand_nested=False)

probe_x = np.random.rand(4, args.image_size, args.image_size, 3).astype("float32")
probe_y = (np.random.rand(4, 14) > 0.8).astype("float32")
result = model.evaluate(probe_x, probe_y, batch_size=4, verbose=0)
print("smoke-test evaluate:", result)
print(f"environment check finished in {time.perf_counter() - t_start:.1f}s")
