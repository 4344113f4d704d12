# tf.data with heavy per-image augmentation, no parallel map and no prefetch.
import keras
import tensorflow as tf
from truth import measure, timed_fit


def augment(i):
    img = tf.random.stateless_uniform([96, 96, 3], seed=[i, 0])
    for _ in range(6):
        img = tf.image.resize(tf.image.random_flip_left_right(img), [96, 96])
        img = tf.image.adjust_contrast(img, 1.1)
    return tf.image.resize(img, [16, 16]), tf.reduce_mean(img, keepdims=True)[0, 0]


def dataset():
    return tf.data.Dataset.range(100000).map(augment).batch(16)


model = keras.Sequential(
    [
        keras.Input((16, 16, 3)),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 40)
measure(model, dataset, 30)
