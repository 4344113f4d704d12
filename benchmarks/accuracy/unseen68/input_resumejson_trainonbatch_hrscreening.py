"""HR applicant screening (shortlist prediction) from JSON resumes.

Input: train_on_batch fed from a Python loop. Each step json-parses resume
records, normalises employment dates with datetime.strptime, computes tenure
and gaps, tokenises free-text summaries with a regex and hashes skills.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
import datetime
import random
import re
import zlib

NAME = "input_resumejson_trainonbatch_hrscreening"
BATCH = 64
STEPS = 70
NFEAT = 512
NRES = 3000
NJOBS = 3            # employment stints per resume (parsing knob)
SUMMARY_WORDS = 40

SKILLS = ["python", "sql", "excel", "payroll", "recruiting", "compliance", "sap", "workday", "java",
          "negotiation", "onboarding", "benefits", "labor law", "tableau", "kubernetes", "audit"]
WORDS = ("led managed built improved reduced hired trained coordinated analysed designed team "
         "process cost budget employees vendors policy quarterly global remote stakeholder").split()
TITLES = ["HR Generalist", "Recruiter", "Payroll Specialist", "Data Analyst", "Engineer", "Manager"]
TOKEN = re.compile(r"[a-z][a-z+#.]{1,20}")


def make_resumes(n):
    r = random.Random(68)
    out = []
    for i in range(n):
        jobs, y = [], 2026
        for _ in range(NJOBS):
            end = datetime.date(y, r.randint(1, 12), 1)
            start = datetime.date(y - r.randint(1, 4), r.randint(1, 12), 1)
            jobs.append({"title": r.choice(TITLES), "employer": f"Company {r.randint(1, 400)}",
                         "start": start.strftime("%b %Y"), "end": end.strftime("%m/%Y"),
                         "bullets": [" ".join(r.choice(WORDS) for _ in range(12)) for _ in range(3)]})
            y = start.year - r.randint(0, 1)
        rec = {"id": f"APP-{i:06d}", "name": f"Candidate {i}",
               "contact": {"email": f"c{i}@example.org", "phone": f"+1-555-{r.randint(1000, 9999)}"},
               "summary": " ".join(r.choice(WORDS + SKILLS) for _ in range(SUMMARY_WORDS)),
               "skills": r.sample(SKILLS, r.randint(2, 8)),
               "education": r.choice(["High School", "BSc", "MSc", "MBA", "PhD"]),
               "jobs": jobs}
        out.append(json.dumps(rec))
    return out


EDU = {"High School": 0.2, "BSc": 0.5, "MSc": 0.7, "MBA": 0.8, "PhD": 1.0}


def featurize(raw):
    rec = json.loads(raw)
    v = np.zeros(NFEAT, np.float32)
    months, gaps, prev_start = 0, 0, None
    for job in rec["jobs"]:
        s = datetime.datetime.strptime(job["start"], "%b %Y")
        e = datetime.datetime.strptime(job["end"], "%m/%Y")
        months += (e.year - s.year) * 12 + e.month - s.month
        if prev_start is not None:
            gaps += max(0, (prev_start.year - e.year) * 12 + prev_start.month - e.month)
        prev_start = s
        v[zlib.crc32(job["title"].lower().encode()) % 64] += 1
        for bullet in job["bullets"]:
            for tok in TOKEN.findall(bullet.lower()):
                v[64 + zlib.crc32(tok.encode()) % 192] += 1
    for tok in TOKEN.findall(rec["summary"].lower()):
        v[256 + zlib.crc32(tok.encode()) % 192] += 1
    for sk in rec["skills"]:
        v[448 + zlib.crc32(sk.encode()) % 48] += 1
    v[64:448] /= max(1.0, v[64:448].sum())
    v[500] = months / 240.0
    v[501] = gaps / 60.0
    v[502] = EDU[rec["education"]]
    v[503] = len(rec["skills"]) / 8.0
    label = float(("payroll" in rec["skills"] or "compliance" in rec["skills"]) and months > 120)
    return v, label


def make_batch(r, resumes):
    xs = np.zeros((BATCH, NFEAT), np.float32)
    ys = np.zeros((BATCH, 1), np.float32)
    for b in range(BATCH):
        xs[b], ys[b, 0] = featurize(resumes[r.randrange(len(resumes))])
    return xs, ys


def build_model():
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def run_loop(batch_fn):
    model = build_model()
    gaps, last = [], None
    for _ in range(STEPS):
        x, y = batch_fn()
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    resumes = make_resumes(NRES)
    r = random.Random(1)
    full, loss = run_loop(lambda: make_batch(r, resumes))
    compute = None
    if ARGS.truth:
        fixed = make_batch(random.Random(2), resumes)
        compute, _ = run_loop(lambda: fixed)
    finish(NAME, full, compute, extra=f" loss={loss:.3f}")


if __name__ == "__main__":
    main()
