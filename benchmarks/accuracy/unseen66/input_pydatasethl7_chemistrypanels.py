"""Healthcare: chemistry-panel risk model fed by keras.utils.PyDataset whose
__getitem__ parses HL7 v2 ORU^R01 messages (segments, fields, components,
reference ranges, unit conversion) into features for model.fit.
Deliberate bottleneck: input."""
import os, sys, time, json
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 128, 32, 3
TESTS = [("GLU", "Glucose", 5.5, 1.2, "mmol/L", 18.0), ("NA", "Sodium", 140, 3, "mmol/L", 1.0),
         ("K", "Potassium", 4.2, 0.4, "mmol/L", 1.0), ("CL", "Chloride", 102, 3, "mmol/L", 1.0),
         ("CREA", "Creatinine", 80, 20, "umol/L", 0.0113), ("BUN", "Urea", 5.0, 1.5, "mmol/L", 2.8),
         ("ALT", "ALT", 25, 10, "U/L", 1.0), ("AST", "AST", 24, 8, "U/L", 1.0),
         ("ALP", "AlkPhos", 80, 25, "U/L", 1.0), ("TBIL", "Bilirubin", 10, 4, "umol/L", 0.0585),
         ("ALB", "Albumin", 40, 4, "g/L", 0.1), ("CA", "Calcium", 2.35, 0.1, "mmol/L", 4.0),
         ("MG", "Magnesium", 0.85, 0.08, "mmol/L", 2.43), ("PHOS", "Phosphate", 1.1, 0.2, "mmol/L", 3.1),
         ("CRP", "CRP", 5, 4, "mg/L", 1.0), ("LACT", "Lactate", 1.2, 0.5, "mmol/L", 9.0)]
CODE_IDX = {t[0]: i for i, t in enumerate(TESTS)}
NT = len(TESTS)


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_messages(n, seed=66):
    rng = np.random.default_rng(seed)
    msgs = []
    for i in range(n):
        sick = rng.random() < 0.3
        segs = [f"MSH|^~\\&|LIS|MAINLAB|EHR|HOSP|20260101{i%24:02d}00||ORU^R01|MSG{i:07d}|P|2.5.1",
                f"PID|1||MRN{rng.integers(1e6):07d}^^^HOSP^MR||DOE^JANE^Q||19{rng.integers(30,99)}0101|F",
                f"OBR|1|ORD{i}|FIL{i}|CHEM^Chemistry panel^L|||20260101"]
        for repeat in range(3):  # three draws per message
            for j, (code, name, mu, sd, unit, conv) in enumerate(TESTS):
                v = rng.normal(mu * (1.4 if sick and j % 3 == 0 else 1.0), sd)
                lo, hi = mu - 2 * sd, mu + 2 * sd
                flag = "H" if v > hi else ("L" if v < lo else "N")
                segs.append(f"OBX|{len(segs)-2}|NM|{code}^{name}^LN|{repeat+1}|{v:.3f}|{unit}^^UCUM|"
                            f"{lo:.2f}-{hi:.2f}|{flag}|||F|||20260101{repeat:02d}30")
        msgs.append("\r".join(segs))
    return msgs


def parse_message(msg):
    vals = [[] for _ in range(NT)]
    flags = np.zeros(NT, np.float32)
    age = 0.0
    for seg in msg.split("\r"):
        fields = seg.split("|")
        if fields[0] == "PID":
            dob = fields[7]
            age = (2026 - int(dob[:4])) / 100.0
        elif fields[0] == "OBX":
            comps = fields[3].split("^")
            k = CODE_IDX.get(comps[0])
            if k is None:
                continue
            v = float(fields[5])
            unit = fields[6].split("^")[0]
            cut = fields[7].index("-", 1)
            lo_s, hi_s = fields[7][:cut], fields[7][cut + 1:]
            lo, hi = float(lo_s), float(hi_s)
            mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
            vals[k].append((v - mid) / half)
            if fields[8] in ("H", "L"):
                flags[k] += 1.0
            if unit == "umol/L":
                pass
    feats = np.zeros(3 * NT + 1, np.float32)
    for k in range(NT):
        seq = vals[k]
        feats[k] = sum(seq) / len(seq)
        feats[NT + k] = max(seq) - min(seq)
        feats[2 * NT + k] = flags[k] / 3.0
    feats[-1] = age
    y = np.float32(1.0 if flags[0] + flags[3] + flags[6] + flags[9] + flags[12] + flags[15] >= 4 else 0.0)
    return feats, y


class HL7Panels(keras.utils.PyDataset):
    def __init__(self, msgs, **kw):
        super().__init__(**kw); self.msgs = msgs
    def __len__(self):
        return len(self.msgs) // BATCH
    def __getitem__(self, idx):
        xs, ys = zip(*[parse_message(m) for m in self.msgs[idx * BATCH:(idx + 1) * BATCH]])
        return np.stack(xs), np.array(ys, np.float32)


def build_model():
    inp = keras.Input((3 * NT + 1,))
    h = keras.layers.Dense(512, activation="relu")(inp)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run(data):
    keras.utils.set_random_seed(66)
    m = build_model()
    t = StepTimer()
    m.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t], verbose=0)
    return t.sec_per_step()


def main():
    msgs = make_messages(BATCH * STEPS)
    full = run(HL7Panels(msgs))
    emit({"steps_per_second": 1.0 / full})
    msg = f"[input_pydatasethl7_chemistrypanels] full {full*1000:.1f} ms/step"
    if TRUTH:
        batch = HL7Panels(msgs)[0]
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": f})
        msg += f" compute {comp*1000:.1f} ms/step truth_input_fraction {f:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
