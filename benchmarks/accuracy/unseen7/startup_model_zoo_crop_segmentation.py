"""Sanity check before launching a crop-field segmentation job.

Prints the TF/Keras versions and visible devices, builds the candidate
architectures (a custom U-Net and two keras.applications backbones, random
init), compiles them, prints their summaries and does one forward pass on a
dummy batch to make sure the shapes line up. No training happens here.
"""

import time

T_START = time.perf_counter()

import keras
import numpy as np
import tensorflow as tf
from keras import layers

TILE = 128
N_CLASSES = 5  # background, wheat, maize, rapeseed, fallow


def conv_block(x, filters):
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(x)


def unet(filters=(32, 64, 128, 256)):
    inp = keras.Input((TILE, TILE, 4), name="rgbn_tile")
    skips, x = [], inp
    for f in filters:
        x = conv_block(x, f)
        skips.append(x)
        x = layers.MaxPooling2D()(x)
    x = conv_block(x, filters[-1] * 2)
    for f, skip in zip(reversed(filters), reversed(skips)):
        x = layers.Conv2DTranspose(f, 2, strides=2, padding="same")(x)
        x = layers.Concatenate()([x, skip])
        x = conv_block(x, f)
    out = layers.Conv2D(N_CLASSES, 1, activation="softmax", name="mask")(x)
    return keras.Model(inp, out, name="unet_crops")


def backbone_segmenter(app_fn, name):
    inp = keras.Input((TILE, TILE, 3))
    base = app_fn(include_top=False, weights=None, input_tensor=inp)
    x = base.output
    while x.shape[1] < TILE:
        x = layers.Conv2DTranspose(64, 3, strides=2, padding="same", activation="relu")(x)
    out = layers.Conv2D(N_CLASSES, 1, activation="softmax")(x)
    return keras.Model(inp, out, name=name)


def main():
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    for dev in tf.config.list_physical_devices():
        print("  device:", dev.device_type, dev.name)
    print("GPU available:", bool(tf.config.list_physical_devices("GPU")))
    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])

    candidates = [
        unet(),
        backbone_segmenter(keras.applications.ResNet50V2, "resnet50v2_seg"),
        backbone_segmenter(keras.applications.MobileNetV2, "mobilenetv2_seg"),
        backbone_segmenter(keras.applications.DenseNet121, "densenet121_seg"),
        backbone_segmenter(keras.applications.ResNet101V2, "resnet101v2_seg"),
        backbone_segmenter(keras.applications.EfficientNetB0, "efficientnetb0_seg"),
    ]
    for model in candidates:
        model.compile(
            optimizer=keras.optimizers.Adam(3e-4),
            loss="sparse_categorical_crossentropy",
            metrics=[keras.metrics.SparseCategoricalAccuracy(name="pix_acc")],
        )
        model.summary(line_length=110, expand_nested=False)
        channels = model.input_shape[-1]
        dummy = np.random.rand(2, TILE, TILE, channels).astype("float32")
        pred = model.predict(dummy, verbose=0)
        print(
            f"{model.name}: params={model.count_params():,} output={pred.shape} "
            f"sum-to-one={np.allclose(pred.sum(-1), 1, atol=1e-3)}"
        )

    print(f"all candidates OK in {time.perf_counter() - T_START:.1f}s")


if __name__ == "__main__":
    main()
