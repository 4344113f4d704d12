import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

# Pet-insurance policies: a claims-service start-up that lists devices, builds and
# compiles a claim-risk model, an injury-photo triage CNN (MobileNetV2, random
# init) and a breed-check DenseNet121, and runs one warm-up prediction on an
# uploaded claim photo. It trains nothing and writes nothing to ACCURACY_OUT.
T_IMPORT = time.perf_counter()
devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()

SPECIES_BREEDS = 400
NUM_NUMERIC = 18


def claim_risk_model():
    breed = keras.Input((1,), dtype="int32", name="breed_id")
    numeric = keras.Input((NUM_NUMERIC,), name="policy_numeric")
    emb = keras.layers.Flatten()(keras.layers.Embedding(SPECIES_BREEDS, 32)(breed))
    x = keras.layers.Concatenate()([emb, numeric])
    for width in (256, 256, 128):
        x = keras.layers.Dense(width, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    claim_prob = keras.layers.Dense(1, activation="sigmoid", name="claim_12m")(x)
    payout = keras.layers.Dense(1, activation="softplus", name="expected_payout")(x)
    model = keras.Model([breed, numeric], [claim_prob, payout], name="claim_risk")
    model.compile(optimizer="adam", loss={"claim_12m": "binary_crossentropy",
                                          "expected_payout": "huber"})
    return model


def photo_triage_model():
    # injury categories: laceration, swelling, skin lesion, eye, dental, fracture, burn, other
    model = keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3), alpha=1.0,
                                              classes=8, name="photo_triage")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


keras.utils.set_random_seed(83)
risk = claim_risk_model()
tier = photo_triage_model()
# breed verification for "breed-specific exclusions" (compiled, not run at start-up)
breed_check = keras.applications.DenseNet121(weights=None, input_shape=(224, 224, 3),
                                             classes=120, name="breed_check")
breed_check.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
claim_photo = np.random.default_rng(83).uniform(0, 255, size=(1, 224, 224, 3)).astype(np.float32)
triage = tier.predict(claim_photo, verbose=0)
print("petpolicies startup: %d physical / %d logical devices, import %.1f s, "
      "models %s (%d params) + %s (%d params) + %s (%d params), photo top class %d, wall %.1f s" % (
          len(devices), len(logical), T_IMPORT - T0, risk.name, risk.count_params(),
          tier.name, tier.count_params(), breed_check.name, breed_check.count_params(),
          int(triage.argmax()), time.perf_counter() - T0))
