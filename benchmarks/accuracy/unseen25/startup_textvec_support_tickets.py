"""Quick smoke test of the support-ticket routing model before wiring it into the service."""

import platform
import time

t_start = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

print(f"python {platform.python_version()}, tensorflow {tf.__version__}, keras {keras.__version__}")
print("devices:", [d.name for d in tf.config.list_physical_devices()])
print("built with CUDA:", tf.test.is_built_with_cuda())

QUEUES = ["billing", "login", "shipping", "refund", "bug"]
sample_tickets = [
    "I was charged twice for my subscription this month",
    "cannot log in after resetting my password",
    "package says delivered but nothing arrived",
    "please refund the order I cancelled last week",
    "the app crashes when I open the settings page",
    "invoice shows the wrong billing address",
    "two factor code never arrives by sms",
    "tracking number has not updated in five days",
]

vectorizer = keras.layers.TextVectorization(
    max_tokens=2000, output_mode="int", output_sequence_length=24
)
vectorizer.adapt(sample_tickets)
print("vocabulary size:", vectorizer.vocabulary_size())

text_in = keras.Input(shape=(1,), dtype="string")
x = vectorizer(text_in)
x = keras.layers.Embedding(2000, 64, mask_zero=True)(x)
x = keras.layers.Bidirectional(keras.layers.GRU(32))(x)
x = keras.layers.Dense(32, activation="relu")(x)
out = keras.layers.Dense(len(QUEUES), activation="softmax")(x)
model = keras.Model(text_in, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.summary()

new_tickets = tf.constant(
    [
        ["my card was billed but the order failed"],
        ["reset link in the email does not work"],
        ["button on checkout page does nothing"],
    ]
)
probs = model.predict(new_tickets, verbose=0)
for ticket, p in zip(new_tickets.numpy()[:, 0], probs):
    print(f"{QUEUES[int(np.argmax(p))]:>9s}  {p.max():.2f}  {ticket.decode()}")
print(f"smoke test finished in {time.perf_counter() - t_start:.1f}s")
