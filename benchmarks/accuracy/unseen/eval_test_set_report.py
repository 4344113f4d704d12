# Fine-tunes a small CNN on a few thousand labelled thumbnails for two epochs, then writes
# the test-set report: model.evaluate over the large test set and a confusion matrix from
# model.predict.
import keras
import numpy as np
import tensorflow as tf

CLASSES = 10
rng = np.random.default_rng(0)
prototypes = rng.integers(0, 160, (CLASSES, 32, 32, 3), dtype=np.uint8)
noise = rng.integers(0, 96, (2048, 32, 32, 3), dtype=np.uint8)


def make_split(n, seed):
    local = np.random.default_rng(seed)
    labels = local.integers(0, CLASSES, n)
    images = prototypes[labels] + noise[local.integers(0, len(noise), n)]
    return images, labels


x_train, y_train = make_split(3000, 1)
x_test, y_test = make_split(80000, 2)
test_set = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)

model = keras.Sequential(
    [
        keras.Input((32, 32, 3)),
        keras.layers.Rescaling(1 / 255.0),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(CLASSES),
    ]
)
model.compile(
    "adam",
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=3)],
)
model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=0)

results = model.evaluate(test_set, verbose=0, return_dict=True)
print("test:", {name: round(float(value), 4) for name, value in results.items()})
predicted = np.argmax(model.predict(test_set, verbose=0), axis=1)
confusion = np.zeros((CLASSES, CLASSES), np.int64)
np.add.at(confusion, (y_test, predicted), 1)
print("per-class recall:", np.round(confusion.diagonal() / confusion.sum(axis=1), 3))
