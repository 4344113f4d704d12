"""Bastion-host SSH auth log windows -> brute-force detector.

Input: a Python generator (tf.data.Dataset.from_generator) regex-parses raw
sshd/sudo syslog lines into hashed per-window features. Feeds model.fit.
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
import random
import re
import zlib

NAME = "input_sshregex_fromgen_bastionlogs"
BATCH = 128
WINDOW = 36          # log lines aggregated per training example
STEPS = 20
EPOCHS = 3
NFEAT = 512
CORPUS = 20000

USERS = ["root", "admin", "deploy", "jdoe", "asmith", "oracle", "git", "backup",
         "svc_scan", "guest", "ubuntu", "postgres", "mlee", "kchan"]
HOSTS = ["bastion-01", "bastion-02", "jump-eu", "jump-us"]


def make_corpus(n):
    r = random.Random(68)
    lines = []
    for _ in range(n):
        d, hh, mm, ss = r.randint(1, 28), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59)
        host = r.choice(HOSTS)
        pid = r.randint(1000, 65000)
        user = r.choice(USERS)
        ip = f"{r.randint(1, 223)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
        if r.random() < 0.3:
            ip = f"185.220.{r.randint(100, 103)}.{r.randint(1, 20)}"
        port = r.randint(1024, 65535)
        kind = r.random()
        head = f"Dec {d:2d} {hh:02d}:{mm:02d}:{ss:02d} {host} "
        if kind < 0.45:
            inv = "invalid user " if r.random() < 0.4 else ""
            lines.append(head + f"sshd[{pid}]: Failed password for {inv}{user} from {ip} port {port} ssh2")
        elif kind < 0.7:
            fp = "%032x" % r.getrandbits(128)
            lines.append(head + f"sshd[{pid}]: Accepted publickey for {user} from {ip} port {port} ssh2: RSA SHA256:{fp}")
        elif kind < 0.85:
            lines.append(head + f"sudo: pam_unix(sudo:session): session opened for user root by {user}(uid=0)")
        else:
            lines.append(head + f"sshd[{pid}]: Invalid user {user} from {ip} port {port}")
    return lines


RE_HEAD = re.compile(r"^(\w{3})\s+(\d+) (\d\d):(\d\d):(\d\d) (\S+) (\w+)(?:\[(\d+)\])?: (.*)$")
RE_FAIL = re.compile(r"Failed password for (invalid user )?(\S+) from ([\d.]+) port (\d+)")
RE_OK = re.compile(r"Accepted (\w+) for (\S+) from ([\d.]+) port (\d+) ssh2(?:: (\w+) SHA256:(\w+))?")
RE_SUDO = re.compile(r"session opened for user (\S+) by (\S+)\(uid=(\d+)\)")
RE_INV = re.compile(r"Invalid user (\S+) from ([\d.]+) port (\d+)")


def h(token):
    return zlib.crc32(token.encode()) % (NFEAT - 16)


def featurize_window(lines):
    v = np.zeros(NFEAT, np.float32)
    fails_by_ip = {}
    users, ips = set(), set()
    for line in lines:
        m = RE_HEAD.match(line)
        if not m:
            continue
        _, day, hh, mm, ss, host, prog, pid, msg = m.groups()
        v[h("host=" + host)] += 1
        v[h("prog=" + prog)] += 1
        v[h("hour=" + hh)] += 1
        f = RE_FAIL.search(msg)
        if f:
            inv, user, ip, port = f.groups()
            fails_by_ip[ip] = fails_by_ip.get(ip, 0) + 1
            users.add(user); ips.add(ip)
            v[h("fail_user=" + user)] += 1
            v[h("fail_net=" + ".".join(ip.split(".")[:2]))] += 1
            v[NFEAT - 16] += 1
            v[NFEAT - 15] += 1 if inv else 0
            v[NFEAT - 14] += int(port) / 65535.0
            continue
        o = RE_OK.search(msg)
        if o:
            method, user, ip, port, alg, fp = o.groups()
            users.add(user); ips.add(ip)
            v[h("ok_user=" + user)] += 1
            v[h("ok_method=" + method)] += 1
            if fp:
                v[h("fp=" + fp[:4])] += 1
            v[NFEAT - 13] += 1
            continue
        s = RE_SUDO.search(msg)
        if s:
            v[h("sudo_by=" + s.group(2))] += 1
            v[NFEAT - 12] += 1
            continue
        i = RE_INV.search(msg)
        if i:
            user, ip, port = i.groups()
            ips.add(ip)
            v[h("inv_user=" + user)] += 1
            v[NFEAT - 11] += 1
    v[NFEAT - 10] = len(users)
    v[NFEAT - 9] = len(ips)
    worst = max(fails_by_ip.values()) if fails_by_ip else 0
    v[NFEAT - 8] = worst
    v /= float(len(lines))
    label = 1.0 if worst >= 3 else 0.0
    return v, label


def batch_stream(corpus, seed):
    r = random.Random(seed)
    while True:
        xs = np.zeros((BATCH, NFEAT), np.float32)
        ys = np.zeros((BATCH, 1), np.float32)
        for b in range(BATCH):
            start = r.randrange(0, len(corpus) - WINDOW)
            xs[b], ys[b, 0] = featurize_window(corpus[start:start + WINDOW])
        yield xs, ys


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    corpus = make_corpus(CORPUS)
    sig = (tf.TensorSpec((BATCH, NFEAT), tf.float32), tf.TensorSpec((BATCH, 1), tf.float32))
    ds = tf.data.Dataset.from_generator(lambda: batch_stream(corpus, 1), output_signature=sig).prefetch(2)
    full = train(ds)
    compute = None
    if ARGS.truth:
        xb, yb = next(batch_stream(corpus, 2))
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute = train(one)
    finish(NAME, full, compute)


if __name__ == "__main__":
    main()
