"""One small real ``tfres.bench()`` run, shared by the bench and report tests.

Every workload runs for real (NumPy, TensorFlow on the CPU, Keras) at tiny sizes so the
whole record takes a few seconds; it is computed once per test session.
"""

from __future__ import annotations

import functools

from tfres.record import Record
from tfres.timeline import Mark

#: HTML, rich markup and matplotlib math at once: every report must show it as typed
HOSTILE_LABEL = '<script>alert(1)</script> $x^2$ [red]r[/red] & "q"'
HOSTILE_MARK = "<i>mark</i> $m$ -->"

TINY_PARAMS = {
    "cpu_matmul": {"sizes": [64, 128], "repeats": 3},
    "tf_matmul": {"sizes": [64, 512], "repeats": 2},
    "train_small": {"samples": 256, "epochs": 2},
    "batch_sweep": {
        "batch_sizes": [16, 64],
        "samples": 256,
        "features": 32,
        "hidden": 32,
        "repeats": 1,
    },
    "input_pipeline": {
        "samples": 64,
        "signal_length": 2048,
        "frame_length": 256,
        "frame_step": 128,
        "batch_size": 16,
        "repeats": 1,
    },
}

WORKLOAD_NAMES = list(TINY_PARAMS)


@functools.cache
def tiny_bench_record() -> Record:
    """A real bench record (not saved anywhere); the same object for the whole session.

    A mark with a hostile label is added after the run, so reports must escape marks too.
    """
    from tfres.benchmark import bench

    record = bench(
        quick=True,
        only=WORKLOAD_NAMES,
        label=HOSTILE_LABEL,
        interval=0.05,
        params=TINY_PARAMS,
        store=False,
    )
    end = record.phases[0].end_seconds or 0.0
    record.marks.append(Mark(t_seconds=end, label=HOSTILE_MARK))
    return record
