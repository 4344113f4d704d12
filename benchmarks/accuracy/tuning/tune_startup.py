# Tuning set: imports and a model summary only (not reported on).
import keras

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.summary()
