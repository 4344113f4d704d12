"""Early sepsis-risk scoring from hospital lab feeds.
Lab results arrive as HL7 v2 ORU^R01 messages (MSH/PID/OBR/OBX segments, pipe and caret
delimited). A custom GradientTape loop parses each batch's messages in Python every step:
segments, fields and components are split, OBX values are unit-converted and range-flagged into
a fixed analyte panel, and the vectors are passed to a @tf.function train step.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 128
STEPS = 500
ACC = os.environ.get("ACCURACY_OUT")

ANALYTES = [("2345-7", "GLU", "mg/dL", 70, 110), ("2160-0", "CREA", "mg/dL", 0.6, 1.3),
            ("6690-2", "WBC", "10*3/uL", 4, 11), ("718-7", "HGB", "g/dL", 12, 17),
            ("777-3", "PLT", "10*3/uL", 150, 400), ("2951-2", "NA", "mmol/L", 135, 145),
            ("2823-3", "K", "mmol/L", 3.5, 5.1), ("2075-0", "CL", "mmol/L", 98, 107),
            ("1963-8", "HCO3", "mmol/L", 22, 29), ("3094-0", "BUN", "mg/dL", 7, 20),
            ("2524-7", "LACT", "mmol/L", 0.5, 2.2), ("1975-2", "TBIL", "mg/dL", 0.1, 1.2),
            ("1742-6", "ALT", "U/L", 7, 56), ("1920-8", "AST", "U/L", 10, 40),
            ("33959-8", "PCT", "ng/mL", 0, 0.5), ("1988-5", "CRP", "mg/L", 0, 10)]
IDX = {a[0]: i for i, a in enumerate(ANALYTES)}
NA = len(ANALYTES)
UNIT_FACTOR = {("GLU", "mmol/L"): 18.016, ("CREA", "umol/L"): 1 / 88.4, ("HGB", "g/L"): 0.1,
               ("BUN", "mmol/L"): 2.8, ("TBIL", "umol/L"): 1 / 17.1}


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


def render_message(rng, mid):
    septic = rng.random() < 0.3
    segs = ["MSH|^~\\&|LIS|GENHOSP|EHR|GENHOSP|20260312%06d||ORU^R01|MSG%08d|P|2.5.1" % (rng.integers(0, 235959), mid),
            "PID|1||%07d^^^GENHOSP^MR||DOE^JANE||19%02d0101|F" % (rng.integers(1e6), rng.integers(30, 99))]
    for draw in range(int(rng.integers(3, 6))):
        segs.append("OBR|%d||LAB%06d|CMP^Comprehensive panel^L|||20260312%04d00" % (draw + 1, rng.integers(1e6), rng.integers(0, 2359)))
        for k, (loinc, name, unit, lo, hi) in enumerate(ANALYTES):
            mu = (lo + hi) / 2
            sd = (hi - lo) / 4 + 0.1
            v = rng.normal(mu, sd)
            if septic and name in ("WBC", "LACT", "PCT", "CRP"):
                v = hi * (1.5 + rng.random() * 2)
            u = unit
            if name == "GLU" and rng.random() < 0.5:
                v, u = v / 18.016, "mmol/L"
            elif name == "CREA" and rng.random() < 0.5:
                v, u = v * 88.4, "umol/L"
            flag = "H" if v > hi else ("L" if v < lo else "N")
            segs.append("OBX|%d|NM|%s^%s^LN||%.3f|%s|%s-%s|%s|||F" % (k + 1, loinc, name, v, u, lo, hi, flag))
    return "\r".join(segs), float(septic)


def parse_message(msg):
    vals = np.zeros(NA, np.float64)
    cnt = np.zeros(NA, np.float64)
    worst = np.zeros(NA, np.float64)
    n_obr = 0
    for seg in msg.split("\r"):
        fields = seg.split("|")
        typ = fields[0]
        if typ == "OBR":
            n_obr += 1
        elif typ == "OBX" and fields[2] == "NM":
            code, name = fields[3].split("^")[:2]
            i = IDX.get(code)
            if i is None:
                continue
            v = float(fields[5])
            unit = fields[6]
            v *= UNIT_FACTOR.get((name, unit), 1.0)
            lo, hi = (float(t) for t in fields[7].split("-"))
            z = (v - lo) / (hi - lo + 1e-6)
            vals[i] += z
            cnt[i] += 1
            dev = max(z - 1.0, -z, 0.0)
            if dev > worst[i]:
                worst[i] = dev
    mean = vals / np.maximum(cnt, 1)
    return np.concatenate([mean, worst, [n_obr / 5.0]]).astype(np.float32)


def build_batch(messages, idx):
    x = np.stack([parse_message(messages[i][0]) for i in idx])
    y = np.array([messages[i][1] for i in idx], np.float32)[:, None]
    return x, y


def build_model():
    return keras.Sequential([keras.Input((2 * NA + 1,)), keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(1)])


def train(messages, fixed_batch, seed):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = np.random.default_rng(seed)
    times, loss = [], 0.0
    for s in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(messages, rng.integers(0, len(messages), BATCH))
        else:
            x, y = fixed_batch
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_input_hl7_tapeloop_labresults_")
    try:
        rng = np.random.default_rng(SEED)
        messages = [render_message(rng, i) for i in range(1500)]
        full, loss = train(messages, None, SEED)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            fixed = build_batch(messages, np.random.default_rng(SEED + 1).integers(0, len(messages), BATCH))
            comp, _ = train(messages, fixed, SEED)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("input_hl7_tapeloop_labresults: loss %.4f, %s" % (loss, msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
