"""Shelf-product recognition with a MobileNet-style network (depthwise-
separable conv blocks, batch norm, ReLU6) trained by a custom tf.function loop.
Product crops live in memory and come from a prefetched tf.data iterator, so
the convolution math dominates each step."""
import argparse, json, os, time
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, IMG, N_CLASSES = 32, 80, 64, 12


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def ds_block(x, filters, stride):
    x = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU(6.0)(x)
    x = keras.layers.Conv2D(filters, 1, use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    return keras.layers.ReLU(6.0)(x)


def build_mobilenet():
    inp = keras.Input((IMG, IMG, 3))
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(inp)
    x = keras.layers.ReLU(6.0)(keras.layers.BatchNormalization()(x))
    for filters, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
        x = ds_block(x, filters, stride)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(N_CLASSES)(keras.layers.Dropout(0.2)(x)))


def make_crops(n, rng):
    labels = rng.integers(0, N_CLASSES, size=n)
    palette = rng.uniform(0, 1, size=(N_CLASSES, 3))
    yy, xx = np.mgrid[0:IMG, 0:IMG] / IMG
    box = ((np.abs(xx - 0.5) < 0.3) & (np.abs(yy - 0.5) < 0.4)).astype(np.float32)
    img = box[None, :, :, None] * palette[labels][:, None, None, :] + 0.15 * rng.normal(size=(n, IMG, IMG, 3))
    return img.astype(np.float32), labels.astype(np.int32)


def run_loop(next_batch):
    keras.utils.set_random_seed(0)
    model = build_mobilenet()
    opt = keras.optimizers.SGD(0.05, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[4:])), loss


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    crops, labels = make_crops(1024, np.random.default_rng(0))
    ds = (tf.data.Dataset.from_tensor_slices((crops, labels)).batch(BATCH, drop_remainder=True)
          .cache().shuffle(64).repeat().prefetch(tf.data.AUTOTUNE))
    it = iter(ds)
    full, loss = run_loop(lambda: next(it))
    emit({"steps_per_second": 1.0 / full})
    msg = f"mobilenet_loop_retail: {full*1000:.1f} ms/step, loss {loss:.3f}"
    if args.truth:
        xb, yb = next(it)
        compute, _ = run_loop(lambda: (xb, yb))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
