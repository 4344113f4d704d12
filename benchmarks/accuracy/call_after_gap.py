"""How much slower a custom loop's step call runs after a gap than back to back, and whether
the process's CPU in the call shows it (no tfres: plain Keras, timed here).

A loop fed from Python makes its next batch between two calls of its step; the truth of a
held-out script (its step on one cached batch, reused) makes the calls back to back. Four
kinds of gap before each ``train_on_batch`` call, interleaved in rounds, medians:

- back to back: nothing between the calls (the truth's cached run, the hook's call alone);
- sleep: ``time.sleep(gap)``: idle, TensorFlow's threads go to sleep, no work of the input;
- python: a pure-Python busy loop for the gap (a parser's work);
- numpy: fresh NumPy arrays made for the gap (new data, caches taken).

    .venv/bin/python benchmarks/accuracy/call_after_gap.py --gap-ms 10 --rounds 12
    .venv/bin/python benchmarks/accuracy/call_after_gap.py --model conv --gap-ms 34

``--model dense`` (the default) is a 5 ms MLP step; ``--model conv`` a 16 ms Conv2D step on
32 grey 40x112 images, the shape of ``unseen81/input_tobloop_gravestones``'s model, after
which a busy gap (python, numpy) and a sleeping one differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _rounds(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of rounds: give 1 or more")
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gap-ms", type=_positive, default=10.0, help="the gap (default 10)")
    parser.add_argument("--rounds", type=_rounds, default=12, help="rounds (default 12)")
    parser.add_argument("--calls", type=_rounds, default=25, help="calls a mode a round")
    parser.add_argument(
        "--model", choices=("dense", "conv"), default="dense", help="the step (default dense)"
    )
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import keras
        import numpy as np
    except ImportError as err:
        print(f"call_after_gap.py: {err}: install tfres[cpu] first", file=sys.stderr)
        return 1

    rng = np.random.default_rng(0)
    model, x, y = (_conv_step if args.model == "conv" else _dense_step)(keras, rng)
    for _ in range(20):  # traced and warm
        model.train_on_batch(x, y)
    gap = args.gap_ms / 1000

    def busy_python() -> None:
        end = time.perf_counter() + gap
        while time.perf_counter() < end:
            pass

    def fresh_numpy() -> None:
        end = time.perf_counter() + gap
        while time.perf_counter() < end:
            float(rng.normal(size=(64, 256)).astype("float32").sum())

    modes: dict[str, Callable[[], None]] = {
        "back to back": lambda: None,
        "sleep": lambda: time.sleep(gap),
        "python": busy_python,
        "numpy": fresh_numpy,
    }
    walls: dict[str, list[float]] = {name: [] for name in modes}
    cpus: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(args.rounds):
        for name, before in modes.items():
            for _ in range(args.calls):
                before()
                cpu, start = time.process_time(), time.perf_counter()
                model.train_on_batch(x, y)
                walls[name].append(time.perf_counter() - start)
                cpus[name].append(time.process_time() - cpu)
    base_wall = statistics.median(walls["back to back"])
    base_cpu = statistics.median(cpus["back to back"])
    out = {
        "model": args.model,
        "gap_ms": args.gap_ms,
        "rounds": args.rounds,
        "calls": args.calls,
        "modes": {},
    }
    for name in modes:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        out["modes"][name] = {
            "call_ms": 1000 * wall,
            "cpu_ms": 1000 * cpu,
            "call_ratio": wall / base_wall,
            "cpu_ratio": cpu / base_cpu,
        }
        print(
            f"{name:13} call {1000 * wall:6.2f} ms (x{wall / base_wall:4.2f})"
            f"  CPU in it {1000 * cpu:6.2f} ms (x{cpu / base_cpu:4.2f})",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


def _dense_step(keras: Any, rng: Any) -> tuple[Any, Any, Any]:
    """A 5 ms MLP ``train_on_batch`` and its batch."""
    x = rng.normal(size=(64, 256)).astype("float32")
    y = rng.normal(size=(64, 1)).astype("float32")
    model = keras.Sequential(
        [
            keras.Input((256,)),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    model.compile("adam", "mse")
    return model, x, y


def _conv_step(keras: Any, rng: Any) -> tuple[Any, Any, Any]:
    """A Conv2D ``train_on_batch`` of about 16 ms here on 32 grey 40x112 images."""
    x = rng.random(size=(32, 40, 112, 1)).astype("float32")
    y = rng.integers(0, 4, size=(32,)).astype("int32")
    model = keras.Sequential(
        [
            keras.Input((40, 112, 1)),
            keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(4),
        ]
    )
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer="adam", loss=loss)
    return model, x, y


if __name__ == "__main__":
    sys.exit(main())
