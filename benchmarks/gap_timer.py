"""The Python input of a custom loop, timed four ways, against the same batch made bare.

A custom loop over a Python generator (``for x in batches(): train_step(x)``) gets its input
wait from the time inside the generator between two calls of the hot function. tfres first
timed it with Python's profile hook (``sys.setprofile``, reproduced below as
``ProfileHookTimer`` for the comparison), which every Python and C call in the gap pays for;
it now samples the loop thread's stack (``_tfres_pyinput.GapSampler``): by SIGALRM on the
loop's own thread since session 41, from a daemon thread before (and where SIGALRM is taken).

For each kind of generator, each round makes one batch bare, one under each timer, in turns
(then the order rotated); per timer it reports the median of the reading over the bare
batch (1.00 is right), the median of the batch's own time under it over bare (what the
timer slows the program), the 90th percentile of each batch's error against that batch's
own time (how far one gap's reading can be off), and the batches with no sample (not
measured). The sampler runs four times: as the child runs it (SIGALRM), and by its thread
at a switch interval of 0.1 ms (sessions 29-40), 0.5 ms and the program's 5 ms (before).
Nothing here imports tfres's package: the timer is loaded from ``src/tfres/devices/inject``
as the child loads it.

    .venv/bin/python benchmarks/gap_timer.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/tfres/devices/inject"))
from _tfres_pyinput import CO_GENERATOR, INPUT_METHODS, GapSampler  # noqa: E402


class ProfileHookTimer:
    """The earlier method: the profile hook on in the gap, the outermost input frame timed
    from its ``call`` event to its ``return``."""

    def __init__(self) -> None:
        self._outer = None
        self._started = self._seconds = 0.0

    def _hook(self, frame, event, arg):  # noqa: ANN001, ANN202
        if event == "call" and self._outer is None:
            code = frame.f_code
            if code.co_flags & CO_GENERATOR or code.co_name in INPUT_METHODS:
                self._outer, self._started = frame, time.monotonic()
        elif event == "return" and frame is self._outer:
            self._seconds += time.monotonic() - self._started
            self._outer = None

    def start(self, limit_seconds: float = float("inf"), loop_frame=None) -> None:  # noqa: ANN001
        self._seconds, self._outer = 0.0, None
        sys.setprofile(self._hook)

    def stop(self) -> float:
        sys.setprofile(None)
        return self._seconds


def _point(x: float, y: float) -> float:
    return math.sin(x) * math.cos(y)


def per_sample_python() -> Iterator[float]:
    """~400,000 Python and C calls per batch (a rasteriser, a tokenizer written in Python)."""
    while True:
        yield sum(_point(i * 0.01, i * 0.02) for i in range(130_000))


def short_python() -> Iterator[float]:
    """A short batch of Python, about 8 ms (a few records decoded a step): the sampler's
    spacing shows here, where a gap holds one or two samples at the default switch interval."""
    while True:
        yield sum(_point(i * 0.01, i * 0.02) for i in range(60_000))


def random_walk() -> Iterator[np.ndarray]:
    """A random walk over a graph, a neighbour drawn by NumPy per hop: each draw hands the
    GIL back and takes it again, and a thread waiting for it is beaten every time (the GIL
    convoy of ``unseen38/input_randomwalk_citations``, read 32% against 72% by the thread).
    ``tests/devices/test_inject_pyinput_alarm.py`` reads it by SIGALRM."""
    rng = np.random.default_rng(0)
    adj = [rng.integers(0, 3000, int(rng.integers(2, 15))) for _ in range(3000)]
    feats = rng.normal(size=(3000, 64)).astype("float32")
    while True:
        agg = np.zeros((128, 64), "float32")
        for i, seed in enumerate(rng.integers(0, 3000, 128)):
            node, seen = seed, []
            for _ in range(24):
                nbrs = adj[node]
                node = nbrs[rng.integers(len(nbrs))]
                seen.append(node)
            agg[i] = feats[seen].mean(axis=0)
        yield agg


def numpy_per_item() -> Iterator[np.ndarray]:
    """A few NumPy calls per item, 256 items a batch (an augmenting reader)."""
    rng = np.random.default_rng(0)
    while True:
        yield np.stack([np.fliplr(rng.random((96, 96))).clip(0.1, 0.9) for _ in range(256)])


def reads_files(tmp: Path) -> Callable[[], Iterator[bytes]]:
    paths = []
    for i in range(64):
        path = tmp / f"item{i}.bin"
        path.write_bytes(np.random.default_rng(i).bytes(2 * 2**20))
        paths.append(path)

    def batches() -> Iterator[bytes]:
        while True:
            yield b"".join(p.read_bytes() for p in paths)

    return batches


def _timed(gen: Iterator, timer) -> tuple[float, float | None]:  # noqa: ANN001
    if timer is not None:
        timer.start(loop_frame=sys._getframe())
    start = time.perf_counter()
    next(gen)
    took = time.perf_counter() - start
    read = timer.stop() if timer is not None else None
    if read is not None and not isinstance(read, float):
        read = read.seconds()  # the sampler's GapReading
    return took, read


def compare(make: Callable[[], Iterator], rounds: int) -> dict[str, dict[str, float]]:
    gen = make()
    timers = {
        "bare": None,
        "profile hook": ProfileHookTimer(),
        "sampler, 5 ms": GapSampler(every=0.001, switch=None, alarm=False),  # session 28
        "sampler": GapSampler(),  # as the child runs it: by SIGALRM (session 41)
        "thread, 0.1 ms": GapSampler(alarm=False),  # sessions 29-40
        "thread, 0.5 ms": GapSampler(switch=0.0005, alarm=False),
    }
    took: dict[str, list[float]] = {name: [] for name in timers}
    # (the batch's own time, the timer's reading); a reading of None: a gap with no sample
    pairs: dict[str, list[tuple[float, float | None]]] = {name: [] for name in timers}
    names = list(timers)
    next(gen)  # warm
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t, v = _timed(gen, timers[name])
            took[name].append(t)
            pairs[name].append((t, v))
    bare = statistics.median(took["bare"])
    rows = {}
    for name in names[1:]:
        read = [(t, v) for t, v in pairs[name] if v is not None]
        rows[name] = {
            "bare_ms": bare * 1e3,
            "read_over_bare": statistics.median(v for _, v in read) / bare if read else math.nan,
            "slowdown": statistics.median(took[name]) / bare,
            # each batch's reading against that batch's own time under the timer
            "error_p90": (
                statistics.quantiles([abs(v - t) / t for t, v in read], n=10)[-1]
                if len(read) > 1
                else math.nan
            ),
            "starved": len(pairs[name]) - len(read),
        }
    return rows


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of rounds, 1 or more")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=_rounds, default=21, help="rounds per generator (21)")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        kinds = {
            "short Python": short_python,
            "per-sample Python": per_sample_python,
            "NumPy per item": numpy_per_item,
            "reads 64 files": reads_files(Path(tmp)),
            "random walk": random_walk,
        }
        print(
            f"{'generator':<20} {'bare ms':>8} {'timer':<15} {'read/bare':>9} {'slowdown':>9}"
            f" {'batch error p90':>15} {'no sample':>9}"
        )
        for kind, make in kinds.items():
            for timer, row in compare(make, args.rounds).items():
                print(
                    f"{kind:<20} {row['bare_ms']:8.2f} {timer:<15} "
                    f"{row['read_over_bare']:9.2f} {row['slowdown']:9.2f}"
                    f" {row['error_p90']:15.0%} {row['starved']:>6}/{args.rounds}"
                )


if __name__ == "__main__":
    main()
