"""Laboratory automation: preflight check run before a robotic assay cell starts
its shift.

It imports TensorFlow, inspects the available devices and build flags, builds
and compiles the three models the cell uses (plate-image QC CNN, absorbance
spectrum regressor, colony-count head on a MobileNetV3 backbone), and runs one
prediction on a dummy plate/spectrum to confirm the graph executes. No
training and no data files.
"""
import os
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def plate_qc_model():
    inp = keras.Input((128, 192, 3), name="plate_rgb")
    x = keras.layers.Rescaling(1 / 255.0)(inp)
    for f in (16, 32, 64, 128):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(96, activation="sigmoid", name="well_ok")(x)
    m = keras.Model(inp, out, name="plate_qc")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def spectrum_model():
    inp = keras.Input((601, 1), name="absorbance_200_800nm")
    x = keras.layers.Conv1D(32, 11, activation="relu")(inp)
    x = keras.layers.MaxPooling1D(3)(x)
    x = keras.layers.Conv1D(64, 7, activation="relu")(x)
    x = keras.layers.Bidirectional(keras.layers.GRU(32))(x)
    out = keras.layers.Dense(4, name="analyte_conc")(x)
    m = keras.Model(inp, out, name="spectrum_regressor")
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def colony_model():
    base = keras.applications.MobileNetV3Small(input_shape=(160, 160, 3), include_top=False, weights=None,
                                               pooling="avg")
    out = keras.layers.Dense(1, activation="softplus", name="colony_count")(base.output)
    m = keras.Model(base.input, out, name="colony_counter")
    m.compile(optimizer="adam", loss="poisson")
    return m


def main():
    print("TensorFlow", tf.__version__, "Keras", keras.__version__)
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    info = tf.sysconfig.get_build_info()
    print("cuda build:", info.get("is_cuda_build"), "| logical CPUs:", len(tf.config.list_logical_devices("CPU")))
    rng = np.random.default_rng(55)
    total_params = 0
    for build, shape in ((plate_qc_model, (2, 128, 192, 3)), (spectrum_model, (2, 601, 1)),
                         (colony_model, (2, 160, 160, 3))):
        m = build()
        total_params += m.count_params()
        y = m.predict(rng.uniform(0, 1, shape).astype(np.float32), verbose=0)
        print("%-20s params %9d  output %s finite=%s" % (m.name, m.count_params(), y.shape, bool(np.isfinite(y).all())))
    print("startup_labassay_preflight_automation: 3 models ok, %d params, %.1f s" % (total_params, time.perf_counter() - T0))


if __name__ == "__main__":
    main()
