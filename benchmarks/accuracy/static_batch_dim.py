"""Does a held-out script's truth, which trains on ``from_tensors(batch)`` (a static batch
dimension), time a faster step than the user's function traced for the pipeline's spec (a
None batch dimension)? A fresh model each fit, the mean of in-epoch gaps after the first 5;
the two kinds interleaved, 3 rounds. Nothing of tfres is imported. The script named must
define ``SEED``, ``STEPS``, ``render_job``, ``make_dataset`` and ``build_model`` (as
`unseen44/input_gcode_fromgen_printjobs` does).

    .venv/bin/python benchmarks/accuracy/static_batch_dim.py \
        benchmarks/accuracy/unseen44/input_gcode_fromgen_printjobs.py
"""

import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf


class GapTimer(keras.callbacks.Callback):
    """Seconds between train batches within an epoch, past its first 5."""

    def __init__(self) -> None:
        super().__init__()
        self.gaps: list[float] = []
        self.last: float | None = None

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self.last = None

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        now = time.perf_counter()
        if self.last is not None and batch >= 5:
            self.gaps.append(now - self.last)
        self.last = now


NEEDS = ("SEED", "STEPS", "render_job", "make_dataset", "build_model")


def main() -> None:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_file():
        given = sys.argv[1] if len(sys.argv) > 1 else "nothing"
        sys.exit(f"static_batch_dim.py: expected one script's path, got {given}")
    spec = importlib.util.spec_from_file_location("script", sys.argv[1])
    assert spec is not None and spec.loader is not None
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    missing = [name for name in NEEDS if not hasattr(g, name)]
    if missing:
        sys.exit(f"static_batch_dim.py: {sys.argv[1]} does not define {', '.join(missing)}")
    rng = np.random.default_rng(g.SEED)
    jobs = [g.render_job(rng) for _ in range(400)]
    batch = next(iter(g.make_dataset(jobs, g.SEED + 1)))

    def relax(x: Any, y: Any) -> Any:  # the batch behind a None batch dimension
        return (
            tf.compat.v1.placeholder_with_default(x, [None, *x.shape[1:]]),
            tf.compat.v1.placeholder_with_default(y, [None]),
        )

    def ms_per_step(kind: str) -> float:
        keras.utils.set_random_seed(g.SEED)
        model = g.build_model()
        ds = tf.data.Dataset.from_tensors(batch)
        if kind == "none":
            ds = ds.map(relax).cache()
        timer = GapTimer()
        model.fit(ds.repeat(), epochs=2, steps_per_epoch=g.STEPS, callbacks=[timer], verbose=0)
        return statistics.fmean(timer.gaps) * 1e3

    results: dict[str, list[float]] = {"static": [], "none": []}
    for _ in range(3):
        for kind in results:
            results[kind].append(ms_per_step(kind))
    print({kind: [round(v, 2) for v in values] for kind, values in results.items()})
    ratio = statistics.median(results["none"]) / statistics.median(results["static"])
    print(f"none/static median ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
