# "Is my environment OK?": imports TensorFlow, prints versions and devices, builds and
# compiles the production model, prints its summary. No training.
import time

started = time.perf_counter()
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from truth import report  # noqa: E402

imported = time.perf_counter()
print("TensorFlow", tf.__version__, "Keras", keras.__version__)
print("devices:", [d.name for d in tf.config.list_physical_devices()])
print("built with CUDA:", tf.test.is_built_with_cuda())
model = keras.applications.EfficientNetB0(weights=None, input_shape=(128, 128, 3), classes=5)
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.summary(print_fn=lambda line: None)
print("parameters:", model.count_params())
report(import_seconds=imported - started, build_seconds=time.perf_counter() - imported)
