# Checks the environment: imports TensorFlow, lists devices, builds a model. No training.
import keras
import tensorflow as tf

print("GPUs:", tf.config.list_physical_devices("GPU"))
model = keras.applications.MobileNetV2(weights=None, input_shape=(96, 96, 3), classes=10)
print("parameters:", model.count_params())
