"""What stopping TensorFlow's profiler collects after a window over a tf.data-heavy fit, and
how long the stop takes: the events by kind, read back from the trace it writes.

The fit is ``accuracy/unseen30/input_gziptextline_sensorlogs.py``'s (a gzip
``TextLineDataset``, a per-line ``decode_csv`` map, about 10 ms a step), whose default
window costs +2.9% (session 42, ``docs/benchmarks/instrumentation.md``). In one fit the
profiler is started and stopped ``--windows`` times over ``--traced`` steps each, with a
gap between windows. ``--modes`` alternate between windows: ``default`` starts it as tfres
does (``tf.profiler.experimental.start``); ``nodataset`` passes ``include_dataset_ops:
False`` through the session's options dictionary. For each mode it prints the stops' times
and the events per window by name (the part before ``::``), most first.

    .venv/bin/python benchmarks/profiler_stop_events.py
    .venv/bin/python benchmarks/profiler_stop_events.py --modes default --windows 3 --traced 10
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GAP_STEPS = 15  # unprofiled steps between two windows
FIRST = 10  # the first window's first step


def _events(path: str) -> collections.Counter:
    """The trace's events by name, up to its first ``::`` (``ThreadpoolListener``, ...)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with open(path, "rb") as fh:
        space.ParseFromString(fh.read())
    counts: collections.Counter = collections.Counter()
    for plane in space.planes:
        names = plane.event_metadata
        for line in plane.lines:
            for event in line.events:
                name = names[event.metadata_id].name
                counts[name.split("::")[0] if "::" in name else name.split(":")[0]] += 1
    return counts


def _start(mode: str, logdir: str) -> None:
    import tensorflow as tf
    from tensorflow.python.profiler import profiler_v2
    from tensorflow.python.profiler.internal import _pywrap_profiler

    if mode == "default":
        tf.profiler.experimental.start(logdir)
        return
    options = {"host_tracer_level": 2, "device_tracer_level": 1, "python_tracer_level": 0}
    options["include_dataset_ops"] = False
    with profiler_v2._profiler_lock:  # what start() does, with one more option
        profiler_v2._profiler = _pywrap_profiler.ProfilerSession()
        profiler_v2._profiler.start(logdir, options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default="default,nodataset", help="comma-separated")
    parser.add_argument("--windows", type=int, default=4, help="windows in all (default 4)")
    parser.add_argument("--traced", type=int, default=20, help="steps a window (default 20)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = sorted(set(modes) - {"default", "nodataset"})
    if unknown or args.windows < 1 or args.traced < 1:
        parser.error(
            "--modes takes default and nodataset, --windows and --traced 1 or more: got "
            + (", ".join(unknown) or f"{args.windows}, {args.traced}")
        )

    import keras
    import numpy as np
    import tensorflow as tf

    sys.path.insert(0, str(HERE / "accuracy" / "unseen30"))
    import input_gziptextline_sensorlogs as script

    plan = [
        (FIRST + i * (args.traced + GAP_STEPS), modes[i % len(modes)]) for i in range(args.windows)
    ]
    starts = dict(plan)
    stops = {first + args.traced: (mode, first) for first, mode in plan}
    seconds: dict = collections.defaultdict(list)
    counts: dict = collections.defaultdict(list)
    folder = tempfile.mkdtemp(prefix="tfres_stop_events_")

    class Window(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if batch in stops:
                mode, first = stops[batch]
                begin = time.perf_counter()
                tf.profiler.experimental.stop()
                seconds[mode].append(time.perf_counter() - begin)
                pattern = os.path.join(folder, f"{mode}{first}", "**", "*.xplane.pb")
                counts[mode].append(_events(sorted(glob.glob(pattern, recursive=True))[-1]))
            if batch in starts:
                _start(starts[batch], os.path.join(folder, f"{starts[batch]}{batch}"))

    try:
        dataset = script.make_dataset(script.write_shards(folder, np.random.default_rng(0)))
        steps = plan[-1][0] + args.traced + 2
        script.build_model().fit(
            dataset, epochs=1, steps_per_epoch=steps, callbacks=[Window()], verbose=0
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for mode in modes:
        total = sum(counts[mode], collections.Counter())
        stops_ms = [round(t * 1000) for t in seconds[mode]]
        per_window = sum(total.values()) // len(counts[mode])
        print(f"{mode}: stop {stops_ms} ms; events a window {per_window}; {total.most_common(8)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
