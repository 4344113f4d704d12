# Studies how the weights move during training: a callback copies every layer's weights
# after each batch into a list, to compute update norms and plot the trajectory afterwards.
import keras
import numpy as np


class WeightTrajectory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append(self.model.get_weights())


rng = np.random.default_rng(0)
x = rng.normal(size=(32768, 784)).astype(np.float32)
y = np.argmax(x[:, :10] + 0.5 * rng.normal(size=(32768, 10)), axis=1)

model = keras.Sequential(
    [
        keras.Input((784,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(384, activation="relu"),
        keras.layers.Dense(10),
    ]
)
model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
trajectory = WeightTrajectory()
model.fit(x, y, batch_size=256, epochs=4, callbacks=[trajectory], verbose=0)

snapshots = trajectory.snapshots
first = snapshots[0][0]
distances = [np.linalg.norm(s[0] - first) for s in snapshots[:: len(snapshots) // 16]]
print("kept", len(snapshots), "snapshots; distance from the first:", np.round(distances, 3))
