# Dry run before submitting a segmentation job: check the TensorFlow build and devices, set
# memory growth, build and compile the U-Net, print its summary and push one tiny batch
# through it to check the output shape and that the loss is finite.
import os

import keras
import numpy as np
import tensorflow as tf

print("TensorFlow", tf.__version__, "| Keras", keras.__version__)
print("backend:", keras.backend.backend())
for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)
print("CPUs:", tf.config.list_physical_devices("CPU"))
print("GPUs:", tf.config.list_physical_devices("GPU"))
print("oneDNN:", os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"))
build = tf.sysconfig.get_build_info()
print("CUDA build:", build.get("is_cuda_build"), "| ROCm build:", build.get("is_rocm_build"))
keras.utils.set_random_seed(0)


def unet(size=64, classes=3, width=16):
    inputs = keras.Input((size, size, 3))
    skips, h = [], inputs
    for level in range(3):
        h = keras.layers.Conv2D(width * 2**level, 3, padding="same", activation="relu")(h)
        h = keras.layers.Conv2D(width * 2**level, 3, padding="same", activation="relu")(h)
        skips.append(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(width * 8, 3, padding="same", activation="relu")(h)
    for level in reversed(range(3)):
        h = keras.layers.Conv2DTranspose(width * 2**level, 2, strides=2)(h)
        h = keras.layers.Concatenate()([h, skips[level]])
        h = keras.layers.Conv2D(width * 2**level, 3, padding="same", activation="relu")(h)
    outputs = keras.layers.Conv2D(classes, 1)(h)
    return keras.Model(inputs, outputs, name="unet")


model = unet()
model.compile(
    keras.optimizers.Adam(1e-3),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.MeanIoU(num_classes=3, sparse_y_pred=False)],
)
model.summary(line_length=100)
rng = np.random.default_rng(0)
images = rng.random((4, 64, 64, 3), dtype=np.float32)
masks = rng.integers(0, 3, (4, 64, 64))
logits = model(images, training=False)
loss = float(model.loss(masks, logits))
assert logits.shape == (4, 64, 64, 3) and np.isfinite(loss)
print("dry run ok: output", tuple(logits.shape), "loss", round(loss, 4))
