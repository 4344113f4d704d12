# Pre-flight check for the chest X-ray job: print library versions, devices and threading
# settings, build DenseNet-121 (no pretrained weights) with a new 14-label sigmoid head,
# compile it and print the model summary and parameter counts. No training.
import platform

import keras
import numpy as np
import tensorflow as tf

print("Python", platform.python_version(), "| NumPy", np.__version__)
print("TensorFlow", tf.__version__, "| Keras", keras.__version__, "|", keras.backend.backend())
print("devices:", [(d.device_type, d.name) for d in tf.config.list_physical_devices()])
print(
    "threads: intra",
    tf.config.threading.get_intra_op_parallelism_threads(),
    "inter",
    tf.config.threading.get_inter_op_parallelism_threads(),
)
print("float policy:", keras.mixed_precision.dtype_policy().name)
keras.utils.set_random_seed(0)

LABELS = 14
backbone = keras.applications.DenseNet121(
    include_top=False, weights=None, input_shape=(224, 224, 1), pooling="avg"
)
inputs = keras.Input((224, 224, 1), name="xray")
h = keras.layers.Rescaling(1 / 127.5, offset=-1.0)(inputs)
h = backbone(h)
h = keras.layers.Dropout(0.2)(h)
outputs = keras.layers.Dense(LABELS, activation="sigmoid", name="findings")(h)
model = keras.Model(inputs, outputs, name="chexnet")
model.compile(
    keras.optimizers.Adam(1e-4),
    keras.losses.BinaryCrossentropy(),
    metrics=[keras.metrics.AUC(multi_label=True, num_labels=LABELS, name="auc")],
)
model.summary(expand_nested=False)
trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
frozen = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
print(f"parameters: {trainable:,} trainable, {frozen:,} non-trainable")
print("layers in backbone:", len(backbone.layers))
