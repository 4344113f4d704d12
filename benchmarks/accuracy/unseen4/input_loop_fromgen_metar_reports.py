# Nowcasts whether a weather station will report rain in the next hour. Each example is the
# station's last 24 hourly METAR reports, kept as raw text; a Python generator parses every
# report (wind, visibility, cloud layers, temperature/dew point, pressure, weather codes)
# and tf.data.Dataset.from_generator feeds the batches to a hand-written training loop.
import argparse
import re
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

HOURS, FIELDS, BATCH = 24, 14, 64
STATIONS = ["KSEA", "KPDX", "KBOI", "KSFO", "KDEN", "KORD", "KBOS", "KATL", "KMIA", "KPHX"]
COVER = {"FEW": 0.2, "SCT": 0.4, "BKN": 0.7, "OVC": 1.0}
WIND = re.compile(r"^(\d{3}|VRB)(\d{2})(?:G(\d{2}))?KT$")
TEMP = re.compile(r"^(M?\d{2})/(M?\d{2})$")


def make_report(rnd, hour, wet):
    station = STATIONS[rnd.randrange(len(STATIONS))]
    direction = "VRB" if rnd.random() < 0.1 else f"{rnd.randrange(0, 360, 10):03d}"
    speed = rnd.randrange(0, 25) + (8 if wet else 0)
    gust = f"G{speed + rnd.randrange(5, 15):02d}" if rnd.random() < 0.3 else ""
    vis = rnd.choice(["10SM", "7SM", "5SM", "3SM", "1 1/2SM"] if wet else ["10SM", "10SM", "7SM"])
    layers = " ".join(
        f"{rnd.choice(list(COVER))}{rnd.randrange(5, 250):03d}" for _ in range(rnd.randrange(0, 4))
    )
    temp = rnd.randrange(-10, 32)
    dew = temp - rnd.randrange(0, 4 if wet else 15)
    weather = rnd.choice(["-RA", "RA", "BR", "-DZ", ""]) if wet and rnd.random() < 0.6 else ""
    t = f"M{-temp:02d}" if temp < 0 else f"{temp:02d}"
    d = f"M{-dew:02d}" if dew < 0 else f"{dew:02d}"
    pressure = 2992 + rnd.randrange(-60, 40) - (25 if wet else 0)
    return (
        f"METAR {station} 12{hour:02d}53Z {direction}{speed:02d}{gust}KT {vis} {weather} "
        f"{layers} {t}/{d} A{pressure} RMK AO2 SLP{rnd.randrange(100, 300)}"
    )


def parse(report):
    wind_dir = wind_speed = gust = vis = cover = ceiling = temp = dew = press = 0.0
    rain = drizzle = mist = variable = 0.0
    tokens = report.split()
    i = 2
    while i < len(tokens) and tokens[i] != "RMK":
        token = tokens[i]
        wind, tdew = WIND.match(token), TEMP.match(token)
        if wind:
            variable = float(wind.group(1) == "VRB")
            wind_dir = 0.0 if variable else float(wind.group(1)) / 360
            wind_speed = float(wind.group(2)) / 40
            gust = float(wind.group(3) or 0) / 50
        elif token.endswith("SM"):
            if i > 0 and tokens[i - 1].isdigit():
                whole = float(tokens[i - 1])
            else:
                whole = 0.0
            part = token[:-2]
            if "/" in part:
                num, den = part.split("/")
                vis = (whole + float(num) / float(den)) / 10
            else:
                vis = float(part) / 10
        elif token[:3] in COVER:
            amount = COVER[token[:3]]
            cover = max(cover, amount)
            if amount >= 0.7 and ceiling == 0.0:
                ceiling = int(token[3:6]) / 250
        elif tdew:
            temp = float(tdew.group(1).replace("M", "-")) / 40
            dew = float(tdew.group(2).replace("M", "-")) / 40
        elif token.startswith("A") and token[1:].isdigit():
            press = (int(token[1:]) - 2992) / 50
        elif "RA" in token:
            rain = 0.5 if token.startswith("-") else 1.0
        elif "DZ" in token:
            drizzle = 1.0
        elif token == "BR":
            mist = 1.0
        i += 1
    spread = temp - dew
    return [
        wind_dir,
        wind_speed,
        gust,
        vis,
        cover,
        ceiling,
        temp,
        dew,
        spread,
        press,
        rain,
        drizzle,
        mist,
        variable,
    ]


def station_histories(seed=0):
    rnd = __import__("random").Random(seed)
    while True:
        wet = rnd.random() < 0.4
        reports = [make_report(rnd, h, wet and h > rnd.randrange(6, 20)) for h in range(HOURS)]
        features = np.array([parse(r) for r in reports], np.float32)
        yield features, np.float32(wet)


def dataset(seed=0):
    return tf.data.Dataset.from_generator(
        lambda: station_histories(seed),
        output_signature=(
            tf.TensorSpec((HOURS, FIELDS), tf.float32),
            tf.TensorSpec((), tf.float32),
        ),
    ).batch(BATCH)


model = keras.Sequential(
    [
        keras.Input((HOURS, FIELDS)),
        keras.layers.Conv1D(128, 3, padding="same", activation="relu"),
        keras.layers.LSTM(160, return_sequences=True),
        keras.layers.LSTM(160),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ]
)
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
auc = keras.metrics.AUC(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y[:, None], logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    auc.update_state(y[:, None], logits)
    return loss


def train(data, steps, skip=0):
    """Trains ``steps`` steps; returns seconds per step from step ``skip`` on."""
    auc.reset_state()
    for step, (x, y) in enumerate(data):
        if step == skip:
            start = time.perf_counter()
        if step == steps:
            break
        loss = train_step(x, y)
    print(f"loss {float(loss):.3f} auc {float(auc.result()):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()

    train(dataset(1), 3)
    report(steps_per_second=1 / train(dataset(), args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(dataset(2)))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(dataset(3), args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
