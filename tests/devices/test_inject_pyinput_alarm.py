"""The gap sampler by SIGALRM (`_tfres_pyinput.GapSampler` where the program leaves SIGALRM
free), in a fresh interpreter: pytest-timeout holds SIGALRM in the test process, where the
sampler uses its thread (tests/devices/test_inject_pyinput.py). A loader that hands the GIL
back every few microseconds (CPython's convoy) is read whole; a program that takes SIGALRM
for itself, before or after, keeps it as it would have without tfres."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfres.devices.child_env import INJECT_DIR

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("numpy")
if not hasattr(signal, "setitimer"):
    pytest.skip("no setitimer here: the sampler uses its thread", allow_module_level=True)

HEADER = f"""
import json, signal, statistics, sys, time
sys.path.insert(0, {str(INJECT_DIR)!r})
from _tfres_pyinput import GapSampler
"""

# the random walk of benchmarks/gap_timer.py: one neighbour drawn by NumPy per hop, each
# draw releasing and taking back the GIL, so a thread waiting for the GIL is woken and
# beaten every few us (its graph is built in the first gap, which the checks leave out)
CONVOY = f"""
sys.path.insert(0, {str(ROOT / "benchmarks")!r})
from gap_timer import random_walk as batches

def gaps(sampler, n=20, every=None):
    out, g = [], batches()
    for _ in range(n):
        began = time.perf_counter()
        sampler.start(loop_frame=sys._getframe(), every=every)
        t = time.perf_counter()
        next(g)
        took = time.perf_counter() - t
        time.sleep(0.002)  # the loop's own Python: not input
        reading = sampler.stop(sys._getframe())
        # the samples are taken over the whole gap, from start() to stop()
        whole = time.perf_counter() - began
        out.append((reading.seconds(), took, sampler._samples, whole))
    return out
"""


def _child(code: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(HEADER) + textwrap.dedent(CONVOY) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_a_loader_that_keeps_handing_the_gil_back_is_read_whole() -> None:
    proc = _child(
        """
        sampler = GapSampler()
        rows = gaps(sampler)
        print(json.dumps({"by": sampler.by, "rows": rows,
                          "handler": signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL,
                          "timer": signal.getitimer(signal.ITIMER_REAL)}))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["by"] == "alarm"
    assert out["timer"] == [0.0, 0.0]  # stopped between gaps
    rows = out["rows"][2:]
    # each gap's reading against the loader's own clock around the same next(): a sample
    # every 0.5 ms, the last stretch halved, the loop's 2 ms sleep left out
    good = [r for r, took, *_ in rows if r is not None and 0.8 * took - 0.001 <= r <= took + 0.001]
    assert len(good) >= 0.8 * len(rows), rows
    per_ms = sorted(samples / (whole * 1000) for _, _, samples, whole in rows)
    assert per_ms[len(per_ms) // 2] > 1.0, rows  # about 2 a millisecond: none kept out


def test_a_gap_given_a_longer_interval_takes_fewer_samples_and_reads_as_well() -> None:
    """A gap before a long step is sampled every fortieth of the step, not every 0.5 ms:
    each sample costs the loop a signal and a handler call."""
    proc = _child(
        """
        sampler = GapSampler()
        rows = gaps(sampler, every=0.004)
        print(json.dumps({"by": sampler.by, "rows": rows}))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["by"] == "alarm"
    rows = out["rows"][2:]
    # samples over the whole gap (the loader's next() and the loop's 2 ms sleep after it)
    per_ms = sorted(samples / (whole * 1000) for _, _, samples, whole in rows)
    assert 0.1 < per_ms[len(per_ms) // 2] < 0.3, rows  # about one each 4 ms, not two a ms
    # each edge within half an interval, as at 0.5 ms within a quarter of a millisecond
    good = [r for r, took, *_ in rows if r is not None and 0.8 * took - 0.004 <= r <= took + 0.004]
    assert len(good) >= 0.8 * len(rows), rows


def test_a_program_that_takes_sigalrm_later_gets_it_as_before() -> None:
    """After gaps sampled by the timer: its own handler runs on its own alarm; then, with
    the default action back, an alarm ends the program as it would have without tfres."""
    proc = _child(
        """
        sampler = GapSampler()
        gaps(sampler, 4)
        assert sampler.by == "alarm"
        got = []
        signal.signal(signal.SIGALRM, lambda *_: got.append(1))
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        time.sleep(0.3)
        print("own handler ran", len(got), flush=True)
        gaps(sampler, 2)
        print("then by", sampler.by, flush=True)  # the program's SIGALRM: the thread's gaps
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(1)
        time.sleep(5)
        print("still running")
        """
    )
    assert proc.stdout.splitlines() == ["own handler ran 1", "then by thread"], proc.stderr
    assert proc.returncode == -signal.SIGALRM


def test_a_program_that_holds_sigalrm_keeps_it_and_the_thread_samples() -> None:
    proc = _child(
        """
        got = []
        signal.signal(signal.SIGALRM, lambda *_: got.append(1))
        sampler = GapSampler()
        gaps(sampler, 4)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        time.sleep(0.3)
        print(sampler.by, len(got))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["thread", "1"]  # its handler alone got its one alarm
