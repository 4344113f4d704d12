"""Risky-command detection for a bastion host: shell history lines (quoted arguments,
pipes, redirections, env assignments) are stored as gzip text; a Python loop tokenises
each line with shlex, hashes tokens, token bigrams and character trigrams into a bag-of-features vector plus
flag statistics, and trains a dense classifier with model.train_on_batch.
"""
import gzip
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 800
HASH = 2048
N_LINES = 30_000
CMDS = ["ls", "cd", "grep", "find", "tar", "curl", "wget", "ssh", "scp", "rsync", "kubectl",
        "docker", "git", "python3", "chmod", "chown", "rm", "sudo", "awk", "sed", "psql", "systemctl"]
ARGS = ["-la", "-rf", "-v", "--force", "-n", "/var/log/syslog", "/etc/passwd", "~/.ssh/id_rsa",
        "*.tar.gz", "--all-namespaces", "prod-db-01", "'select * from users'", "\"hello world\"",
        "777", "root:root", "https://example.internal/x.sh", "--no-verify", "-p 2222", "/tmp/$USER"]


def make_history(rng):
    lines, labels = [], []
    for _ in range(N_LINES):
        parts = []
        for seg in range(int(rng.integers(1, 4))):
            toks = [CMDS[int(rng.integers(0, len(CMDS)))]]
            toks += [ARGS[int(rng.integers(0, len(ARGS)))] for _ in range(int(rng.integers(1, 7)))]
            if rng.random() < 0.2:
                toks.insert(0, f"ENV_{int(rng.integers(9))}=\"v {int(rng.integers(99))}\"")
            parts.append(" ".join(toks))
        line = " | ".join(parts)
        if rng.random() < 0.15:
            line += f" > /tmp/out_{int(rng.integers(999))}.txt 2>&1"
        risky = ("rm" in line and "-rf" in line) or ("curl" in line and "x.sh" in line) or ("chmod 777" in line)
        lines.append(line); labels.append(float(risky))
    return lines, np.array(labels, np.float32)


def featurize(line):
    v = np.zeros(HASH + 8, np.float32)
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    toks = list(lex)
    prev = "<s>"
    for t in toks:
        v[zlib.crc32(t.encode()) % HASH] += 1.0
        v[zlib.crc32((prev + " " + t).encode()) % HASH] += 0.5
        padded = f"^{t}$"
        for k in range(len(padded) - 2):
            v[zlib.crc32(padded[k:k + 3].encode()) % HASH] += 0.25
        prev = t
    v[HASH] = len(toks) / 10
    v[HASH + 1] = sum(t == "|" for t in toks)
    v[HASH + 2] = sum(t.startswith("-") for t in toks) / 5
    v[HASH + 3] = sum(">" in t for t in toks)
    v[HASH + 4] = sum("=" in t for t in toks)
    v[HASH + 5] = sum(t.startswith("/") for t in toks) / 5
    v[HASH + 6] = len(line) / 100
    v[HASH + 7] = sum(" " in t for t in toks)
    return v


def build_model():
    m = keras.Sequential([keras.Input((HASH + 8,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(model, next_batch):
    times, loss = [], 0.0
    for i in range(STEPS):
        x, y = next_batch(i)
        loss = float(model.train_on_batch(x, y)[0])
        times.append(time.perf_counter())
    return float(np.diff(times)[5:].mean()), loss


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_shlex_trainonbatch_shellhistory_")
    try:
        rng = np.random.default_rng(51)
        lines, labels = make_history(rng)
        path = os.path.join(tmp, "bastion_history.txt.gz")
        with gzip.open(path, "wt") as fh:
            fh.write("\n".join(lines))
        with gzip.open(path, "rt") as fh:
            hist_lines = fh.read().splitlines()

        def from_history(i):
            s = (i * BATCH) % (len(hist_lines) - BATCH)
            x = np.stack([featurize(l) for l in hist_lines[s:s + BATCH]])
            return x, labels[s:s + BATCH]

        tf.random.set_seed(51)
        t0 = time.perf_counter()
        full, loss = train(build_model(), from_history)
        emit({"steps_per_second": 1.0 / full})
        if "--truth" in sys.argv:
            xb, yb = from_history(0)
            tf.random.set_seed(51)
            comp, _ = train(build_model(), lambda i: (xb, yb))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        print(f"shell-history risk model: {STEPS} steps, {1.0/full:.1f} steps/s, final loss {loss:.4f}, "
              f"train {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
