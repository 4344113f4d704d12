# A keras.utils.PyDataset that augments images in NumPy inside __getitem__: random crop,
# flip, brightness/contrast jitter, sensor noise, a blur and per-image standardisation.
import keras
import numpy as np
from truth import measure, timed_fit

rng = np.random.default_rng(0)
images = rng.integers(0, 256, (2000, 72, 72, 3), dtype=np.uint8)
labels = rng.integers(0, 10, 2000)


class AugmentedImages(keras.utils.PyDataset):
    def __init__(self, batch_size=64, **kwargs):
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.rng = np.random.default_rng(1)

    def __len__(self):
        return 100000

    def __getitem__(self, index):
        start = (index * self.batch_size) % (len(images) - self.batch_size)
        batch = images[start : start + self.batch_size].astype(np.float32) / 255.0
        out = np.empty((self.batch_size, 64, 64, 3), np.float32)
        for j, image in enumerate(batch):
            top, left = self.rng.integers(0, 9, 2)
            crop = image[top : top + 64, left : left + 64]
            if self.rng.random() < 0.5:
                crop = crop[:, ::-1]
            crop = (crop - crop.mean()) * self.rng.uniform(0.8, 1.2) + crop.mean()
            crop = crop + self.rng.uniform(-0.1, 0.1)
            crop = crop + self.rng.normal(0.0, 0.03, crop.shape)
            padded = np.pad(crop, ((1, 1), (1, 1), (0, 0)), mode="reflect")
            crop = sum(padded[dy : dy + 64, dx : dx + 64] for dy in range(3) for dx in range(3)) / 9
            out[j] = np.clip((crop - crop.mean()) / (crop.std() + 1e-6), -3.0, 3.0)
        return out, labels[start : start + self.batch_size]


model = keras.Sequential(
    [
        keras.Input((64, 64, 3)),
        keras.layers.Conv2D(16, 5, strides=4, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(AugmentedImages(), steps_per_epoch=3, verbose=0)
timed_fit(model, AugmentedImages(), 240)
measure(model, AugmentedImages, 15)
