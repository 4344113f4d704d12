# Product photos come in all sizes; a keras.utils.PyDataset letterboxes each one and resizes
# it to 96x96 with bilinear interpolation written in NumPy, then normalises the batch.
import keras
import numpy as np
from truth import measure, timed_fit

SIZE = 96
rng = np.random.default_rng(0)
photos, categories = [], []
for i in range(600):
    h, w = rng.integers(120, 260, size=2)
    photos.append(rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8))
    categories.append(i % 8)
categories = np.asarray(categories)


def bilinear_resize(image, out_h, out_w):
    h, w = image.shape[:2]
    ys = (np.arange(out_h) + 0.5) * h / out_h - 0.5
    xs = (np.arange(out_w) + 0.5) * w / out_w - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, h - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, w - 1)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy = np.clip(ys - y0, 0, 1)[:, None, None]
    wx = np.clip(xs - x0, 0, 1)[None, :, None]
    img = image.astype(np.float32)
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def letterbox(image):
    h, w = image.shape[:2]
    side = max(h, w)
    canvas = np.full((side, side, 3), 127, np.uint8)
    canvas[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = image
    return canvas


class Photos(keras.utils.PyDataset):
    def __init__(self, batch_size=32, passes=100, **kwargs):
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.per_pass = len(photos) // batch_size
        self.passes = passes
        self.order = np.random.default_rng(1).permutation(len(photos))

    def __len__(self):
        return self.per_pass * self.passes

    def __getitem__(self, index):
        start = (index % self.per_pass) * self.batch_size
        chosen = self.order[start : start + self.batch_size]
        batch = np.stack([bilinear_resize(letterbox(photos[i]), SIZE, SIZE) for i in chosen])
        batch = (batch / 255.0 - 0.5) / 0.25
        return batch.astype(np.float32), categories[chosen]


model = keras.Sequential(
    [
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(8),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(Photos(), steps_per_epoch=3, verbose=0)
timed_fit(model, Photos(), 300)
measure(model, Photos, 30)
